#ifndef ACTEX_MODEL_BLAS_THREADS_H_
#define ACTEX_MODEL_BLAS_THREADS_H_

namespace actex {

// Sets how many threads OpenBLAS uses for each sgemm (n >= 1). OpenBLAS keeps this in
// one process-wide setting shared by every caller thread, so all shards of a process
// see the same value. The forward pass sets it to 1 before each batch (a shard's
// ThreadTeam is the parallelism; OpenBLAS's own threads would only contend with it);
// benchmarks set it around a measurement and restore it.
void SetBlasThreads(int n);

// The current process-wide OpenBLAS thread count.
int BlasThreads();

}  // namespace actex

#endif  // ACTEX_MODEL_BLAS_THREADS_H_
