#ifndef ACTEX_GPU_KERNELS_ELEMENTWISE_H_
#define ACTEX_GPU_KERNELS_ELEMENTWISE_H_

#include "gpu/kernels/launch.h"

namespace actex::gpu {

// The element-wise steps of the forward on the GPU, each as model/kernels computes it
// (separate multiplies and adds where PyTorch has them). Every pointer is device memory.

// out[t] = table[ids[t]] (· scale when scale > 0) (+ position_table[positions[t]] when
// that table is given): [tokens, hidden] from [rows, hidden] tables of `dtype`.
[[nodiscard]] cudaError_t EmbedRows(const void* table, const void* position_table,
                                    StoredDtype dtype, int64_t hidden, const int32_t* ids,
                                    const int32_t* positions, int64_t tokens, float scale,
                                    float* out, cudaStream_t stream);

// HF's rotate_half rotary embedding in place on `heads` heads of `head_dim` in each row
// of `rows` [tokens, ld]; `cos`/`sin` are [positions, head_dim / 2].
[[nodiscard]] cudaError_t RotateRows(float* rows, int64_t tokens, int64_t ld, int heads,
                                     int head_dim, const int32_t* positions, const float* cos,
                                     const float* sin, cudaStream_t stream);

// The MLP activations over `count` values, in place on `x`.
enum class Activation { kSiluTimesUp, kGeluTanhTimesUp, kGeluTanh };
[[nodiscard]] cudaError_t Activate(Activation activation, float* x, const float* up, int64_t count,
                                   cudaStream_t stream);

// rows [tokens, width] += bias [width].
[[nodiscard]] cudaError_t AddBiasRows(float* rows, int64_t tokens, int64_t width, const float* bias,
                                      cudaStream_t stream);
// target += addend over `count` values.
[[nodiscard]] cudaError_t AddInPlace(float* target, const float* addend, int64_t count,
                                     cudaStream_t stream);

// `count` stored values (F16/BF16 exactly widened) as float32.
[[nodiscard]] cudaError_t WidenToFloat(const void* values, StoredDtype dtype, int64_t count,
                                       float* out, cudaStream_t stream);
// `count` float32 values rounded to bfloat16 (nearest, ties to even), as raw bits.
[[nodiscard]] cudaError_t RoundToBFloat16(const float* values, int64_t count, uint16_t* out,
                                          cudaStream_t stream);

}  // namespace actex::gpu

#endif  // ACTEX_GPU_KERNELS_ELEMENTWISE_H_
