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

void CallOneDnnOnThisThread(const std::function<int()>& call, const char* what, int64_t m,
                            int64_t n, int64_t k) {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  const int status = call();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (status != dnnl_success) {
    std::fprintf(stderr, "oneDNN %s [%lld x %lld x %lld] failed with status %d\n", what,
                 static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                 status);
    std::abort();
  }
}

void GemmOnThisThread(GemmBackend backend, int64_t m, int64_t n, int64_t k, const float* x,
                      int64_t ldx, const float* w, int64_t ldw, float beta, float* y, int64_t ldy) {
  if (backend == GemmBackend::kOneDnn) {
    // oneDNN's sgemm is row-major, unlike BLAS.
    CallOneDnnOnThisThread(
        [&] { return dnnl_sgemm('N', 'T', m, n, k, 1.0f, x, ldx, w, ldw, beta, y, ldy); }, "sgemm",
        m, n, k);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(ldx),
              w, static_cast<blasint>(ldw), beta, y, static_cast<blasint>(ldy));
}

}  // namespace actex
