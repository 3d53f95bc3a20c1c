#ifndef ACTEX_GPU_KERNELS_NORMS_H_
#define ACTEX_GPU_KERNELS_NORMS_H_

#include "gpu/kernels/launch.h"

namespace actex::gpu {

// The norms of model/kernels on the GPU, one warp per row, in the same order of
// operations (the sums in double): rows of `x` [rows, width] into `y` (may be `x`).
// RMSNorm: y = weight · (x · 1/sqrt(mean(x²) + eps)).
[[nodiscard]] cudaError_t RmsNormRows(const float* x, int64_t rows, int64_t width,
                                      const float* weight, float eps, float* y,
                                      cudaStream_t stream);
// LayerNorm: y = ((x − mean) · 1/sqrt(var + eps)) · weight + bias.
[[nodiscard]] cudaError_t LayerNormRows(const float* x, int64_t rows, int64_t width,
                                        const float* weight, const float* bias, float eps, float* y,
                                        cudaStream_t stream);

// OLMoE's q/k norm over the whole projections, in two halves around the all-reduce of
// the sums (model/decoder_state.h): per token, sums[2t] = Σ queries[t]² over its
// q_width values and sums[2t + 1] = Σ keys[t][i]² over i in [counted_first,
// counted_end) (in double); then rows[t] = weight · (rows[t] · 1/sqrt(sums[2t + which] /
// count + eps)) for the queries (which 0) or keys (which 1).
[[nodiscard]] cudaError_t SumSquaresOfRows(const float* queries, int64_t q_width, const float* keys,
                                           int64_t kv_width, int64_t counted_first,
                                           int64_t counted_end, int64_t tokens, float* sums,
                                           cudaStream_t stream);
[[nodiscard]] cudaError_t ScaleRowsByRms(float* rows, int64_t width, const float* sums, int which,
                                         float count, float eps, const float* weight,
                                         int64_t tokens, cudaStream_t stream);

}  // namespace actex::gpu

#endif  // ACTEX_GPU_KERNELS_NORMS_H_
