#ifndef ACTEX_GPU_KERNELS_ATTENTION_H_
#define ACTEX_GPU_KERNELS_ATTENTION_H_

#include "gpu/kernels/launch.h"

namespace actex::gpu {

// The shape of one shard's attention (model/kernels/attention.h's AttentionHeads).
struct AttentionShape {
  int heads = 0, kv_heads = 0;            // this shard's
  int first_head = 0, first_kv_head = 0;  // their model-wide indices
  int group = 1;                          // query heads per key/value head
  int head_dim = 0;                       // at most kMaxHeadDim
  // Scores: q·k · multiplier, or q·k / sqrt(head_dim) when it is 0; then
  // tanh(s / softcap) · softcap when softcap > 0.
  float multiplier = 0.0f;
  float softcap = 0.0f;
  int64_t window = 0;  // > 0: query i sees key j iff 0 <= i - j < window
};
inline constexpr int kMaxHeadDim = 256;

// Causal attention within each packed sequence: `queries` and `context`
// [tokens, heads*dim], `keys` and `values` [tokens, kv_heads*dim]; `sequence_start`
// [tokens] holds the first token of each token's sequence. The softmax is float32,
// computed online (running maximum and sum) over the visible keys in order.
[[nodiscard]] cudaError_t CausalAttention(const float* queries, const float* keys,
                                          const float* values, const int32_t* sequence_start,
                                          int64_t tokens, const AttentionShape& shape,
                                          float* context, cudaStream_t stream);

}  // namespace actex::gpu

#endif  // ACTEX_GPU_KERNELS_ATTENTION_H_
