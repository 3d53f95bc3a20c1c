#ifndef ACTEX_GPU_KERNELS_EXPERTS_H_
#define ACTEX_GPU_KERNELS_EXPERTS_H_

#include "gpu/kernels/launch.h"

namespace actex::gpu {

// The row moves of a mixture of experts on the GPU (gpu/gpu_experts.h). `rows` lists,
// for each of `count` assignments, the token it serves (one expert serves a token at
// most once, so no two of its rows collide).

// out[r] = source[rows[r]]: [count, width] from [tokens, width].
[[nodiscard]] cudaError_t GatherRows(const float* source, const int32_t* rows, int64_t count,
                                     int64_t width, float* out, cudaStream_t stream);
// target[rows[r]] += values[r] · weights[r] per element ([count, width] into
// [tokens, width]), a multiply then an add as the CPU's loop.
[[nodiscard]] cudaError_t AddWeightedRows(const float* values, const int32_t* rows,
                                          const float* weights, int64_t count, int64_t width,
                                          float* target, cudaStream_t stream);
// qwen2_moe's shared expert: target[t] += values[t] · sigmoid(normed[t] · gate) for each of
// `tokens` rows of `width` (the dot product summed in double), one warp per row.
[[nodiscard]] cudaError_t AddGatedRows(const float* values, const float* normed, const float* gate,
                                       int64_t tokens, int64_t width, float* target,
                                       cudaStream_t stream);

}  // namespace actex::gpu

#endif  // ACTEX_GPU_KERNELS_EXPERTS_H_
