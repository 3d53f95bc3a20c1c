#ifndef ACTEX_BENCH_THROUGHPUT_TARGETS_H_
#define ACTEX_BENCH_THROUGHPUT_TARGETS_H_

#include <string>
#include <vector>

#include "bench/extract_variant.h"
#include "model/kernels/cpu_isa.h"

namespace actex {

// One figure of bench_extract_throughput held to its bound (bench/README.md says why
// each bound is what it is).
struct Target {
  std::string what;
  double ratio = 0, bound = 0;
  bool at_most = false;  // the ratio must stay at or below the bound
  bool measured = false;
};

// Every target, from the variants that ran (a target whose variants did not run is
// listed, not measured): each variant and family against its own sgemm and, on
// AVX-512, the FMA peak; shards, simulated hosts, early layers, text and Parquet
// corpora against shards1; memory and load time of every variant.
std::vector<Target> ThroughputTargets(const std::vector<VariantResult>& results,
                                      const std::vector<std::string>& families, VectorIsa isa);

// The targets as a table, each marked PASS or FAIL.
void PrintTargets(const std::vector<Target>& targets);

}  // namespace actex

#endif  // ACTEX_BENCH_THROUGHPUT_TARGETS_H_
