#ifndef ACTEX_GPU_KERNELS_LAUNCH_H_
#define ACTEX_GPU_KERNELS_LAUNCH_H_

// What every kernel file of gpu/kernels shares. These headers are plain C++ over device
// pointers and a stream, so that host code (C++23) and device code (nvcc) both read them.
// Every launching function returns its launch's own error (cudaGetLastError right after
// it: a configuration the GPU refused, or an earlier kernel's fault found by then), or
// cudaSuccess when there was nothing to launch; callers name the kernel with it.

#include <cuda_runtime.h>

#include <cstdint>

namespace actex::gpu {

// How a weight is stored on the GPU: as in its file (16-bit weights stay 16-bit).
enum class StoredDtype { kF32, kF16, kBF16 };

// Blocks of `threads` that cover `count` items, one per thread.
inline unsigned BlocksFor(int64_t count, int threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

// Blocks of `threads` for a grid-stride loop over `count` items: one item per thread up
// to 65536 blocks; past that the loop strides over the rest.
inline unsigned GridStrideBlocks(int64_t count, int threads) {
  const int64_t blocks = count / threads + 1;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

}  // namespace actex::gpu

#endif  // ACTEX_GPU_KERNELS_LAUNCH_H_
