#include "model/blas_threads.h"

#include <cblas.h>  // declares openblas_set_num_threads (OpenBLAS's own cblas.h)

#include <algorithm>

namespace actex {

void SetBlasThreads(int n) { openblas_set_num_threads(std::max(n, 1)); }

int BlasThreads() { return openblas_get_num_threads(); }

}  // namespace actex
