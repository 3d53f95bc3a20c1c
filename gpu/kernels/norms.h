#ifndef ACTEX_GPU_KERNELS_NORMS_H_
#define ACTEX_GPU_KERNELS_NORMS_H_

#include "gpu/kernels/launch.h"

namespace actex::gpu {

// The norms of model/kernels on the GPU, one warp per row, in the same order of
// operations (the sums in double): rows of `x` [rows, width] into `y` (may be `x`).
// RMSNorm: y = weight · (x · 1/sqrt(mean(x²) + eps)).
void RmsNormRows(const float* x, int64_t rows, int64_t width, const float* weight, float eps,
                 float* y, cudaStream_t stream);
// LayerNorm: y = ((x − mean) · 1/sqrt(var + eps)) · weight + bias.
void LayerNormRows(const float* x, int64_t rows, int64_t width, const float* weight,
                   const float* bias, float eps, float* y, cudaStream_t stream);

}  // namespace actex::gpu

#endif  // ACTEX_GPU_KERNELS_NORMS_H_
