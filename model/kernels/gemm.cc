#include "model/kernels/gemm.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>

namespace actex {

const char* GemmBackendName(GemmBackend backend) {
  return backend == GemmBackend::kOneDnn ? "onednn" : "openblas";
}

GemmBackend PreferredGemmBackend(VectorIsa isa) {
  return isa == VectorIsa::kAvx512 ? GemmBackend::kOneDnn : GemmBackend::kOpenBlas;
}

void GemmOnThisThread(GemmBackend backend, int64_t m, int64_t n, int64_t k, const float* x,
                      int64_t ldx, const float* w, int64_t ldw, float beta, float* y, int64_t ldy) {
  if (backend == GemmBackend::kOneDnn) {
    // oneDNN parallelises a call over omp_get_max_threads() threads, an OpenMP setting
    // each calling thread holds for itself: one keeps the product on this thread, so a
    // team's shares never start OpenMP workers that would fight the team for cores.
    if (omp_get_max_threads() != 1) omp_set_num_threads(1);
    // oneDNN's sgemm is row-major, unlike BLAS. It fails only on arguments no caller
    // passes (checked by the shard's plan) or when its packing buffers cannot be
    // allocated; neither leaves a Y anyone may use, and no task can return an error.
    // Signals wait while oneDNN's kernels run: a handler running on this thread in the
    // middle of one corrupts the heap (seen under a storm of no-op handlers in
    // tests/actors/signal_storm_test.cc; OpenBLAS is unaffected). A signal that
    // arrives meanwhile is delivered as soon as the product is done.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    const dnnl_status_t status = dnnl_sgemm('N', 'T', m, n, k, 1.0f, x, ldx, w, ldw, beta, y, ldy);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (status != dnnl_success) {
      std::fprintf(stderr, "oneDNN sgemm [%lld x %lld x %lld] failed with status %d\n",
                   static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                   static_cast<int>(status));
      std::abort();
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(ldx),
              w, static_cast<blasint>(ldw), beta, y, static_cast<blasint>(ldy));
}

}  // namespace actex
