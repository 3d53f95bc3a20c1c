#ifndef ACTEX_BENCH_MACHINE_FIGURES_H_
#define ACTEX_BENCH_MACHINE_FIGURES_H_

#include <cstdint>
#include <vector>

#include "bench/throughput_setup.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"

namespace actex {

// What the machine itself can do, measured again around every variant: the float32 FMA
// peaks (AVX2 and, where the CPU has it, AVX-512) and the sgemm of the model's MLP
// shapes by both libraries, each on 2 threads. A variant is compared with the mean of
// the measurements on either side of it, so a change of background load on a shared
// machine hits both sides of a ratio.
class MachineFigures {
 public:
  // `isa`: the kernels' ISA (whose peak counts, and whose preferred library is "the"
  // sgemm); [tokens x hidden]·[hidden x intermediate] and back, `repeats` times each.
  MachineFigures(VectorIsa isa, int64_t tokens, int64_t hidden, int64_t intermediate, int repeats);

  // Measures everything once more (a few seconds), saying so on stderr.
  void Measure();
  // Means of the last two measurements: the ones around the variant just run.
  double NeighbourSgemm() const;
  double NeighbourPeak() const;
  GemmBackend backend() const { return backend_; }

  // Every measurement's spread, and the first sgemm of each library in detail.
  void Print() const;

 private:
  void PrintSgemm(GemmBackend which, const std::vector<SgemmReference>& runs) const;

  VectorIsa isa_;
  GemmBackend backend_, other_;
  int64_t tokens_, hidden_, intermediate_;
  int repeats_;
  bool has_avx512_;
  std::vector<double> avx2_peaks_, avx512_peaks_, peaks_;  // peaks_: of isa_
  std::vector<SgemmReference> sgemm_runs_, other_runs_;
};

}  // namespace actex

#endif  // ACTEX_BENCH_MACHINE_FIGURES_H_
