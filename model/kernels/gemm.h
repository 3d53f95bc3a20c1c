#ifndef ACTEX_MODEL_KERNELS_GEMM_H_
#define ACTEX_MODEL_KERNELS_GEMM_H_

#include <cstdint>
#include <functional>

#include "model/kernels/cpu_isa.h"

namespace actex {

// The libraries that compute float32 matrix products. Both are exact float32 (no
// reduced-precision arithmetic); they differ in speed per ISA and in the last bits.
//  - OpenBLAS: its kernels are chosen by its own CPU table (OPENBLAS_CORETYPE may pin
//    them); 0.3.21 runs AVX2 kernels on CPUs newer than it, AVX-512 ones included.
//  - oneDNN: JIT-generates kernels for the widest ISA it finds at run time, so on an
//    AVX-512 CPU it runs about twice OpenBLAS's AVX2 rate (bench_kernels BM_Gemm).
enum class GemmBackend { kOpenBlas, kOneDnn };

const char* GemmBackendName(GemmBackend backend);

// The faster backend for `isa`, as measured by bench_kernels: oneDNN where AVX-512 is
// in use; OpenBLAS on AVX2, where the two are on a par and OpenBLAS is what actex was
// tuned and verified with.
GemmBackend PreferredGemmBackend(VectorIsa isa);

// Y[m, n] = X[m, k] · W[n, k]ᵀ + beta · Y (row-major; W in a Linear layer's [out, in]
// layout), computed on the calling thread only. beta is 0 (Y is overwritten, whatever it
// held) or 1 (accumulate). For kOpenBlas the caller must hold OpenBLAS at one thread
// (SetBlasThreads(1)) when several threads call this at once; kOneDnn is always one
// thread per call, so a ThreadTeam's members can each run their own share.
// The result is deterministic for a given backend, ISA and shape.
void GemmOnThisThread(GemmBackend backend, int64_t m, int64_t n, int64_t k, const float* x,
                      int64_t ldx, const float* w, int64_t ldw, float beta, float* y, int64_t ldy);

// Runs `call` (one oneDNN call, returning its dnnl_status_t) on the calling thread only,
// with signals held until it returns, and aborts naming `what` if it fails. One thread:
// oneDNN parallelises a call over omp_get_max_threads(), an OpenMP setting each calling
// thread holds for itself, so it is set to one and a team's shares never start OpenMP
// workers that would fight the team for cores. Signals wait: a handler running on this
// thread in the middle of a oneDNN kernel corrupts the heap (seen under a storm of no-op
// handlers in tests/actors/signal_storm_test.cc). oneDNN fails only on arguments no
// caller passes or when it cannot allocate, and no team task can return an error.
void CallOneDnnOnThisThread(const std::function<int()>& call, const char* what, int64_t m,
                            int64_t n, int64_t k);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_GEMM_H_
