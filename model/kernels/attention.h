#ifndef ACTEX_MODEL_KERNELS_ATTENTION_H_
#define ACTEX_MODEL_KERNELS_ATTENTION_H_

#include <cstdint>
#include <vector>

namespace actex {

// Which heads a shard holds: query heads [first_head, first_head + heads) and
// key/value heads [first_kv_head, first_kv_head + kv_heads), with query head h
// reading key/value head h / group (HF's repeat_kv).
struct AttentionHeads {
  int first_head = 0, heads = 0;
  int first_kv_head = 0, kv_heads = 0;
  int group = 1;
  int head_dim = 0;
  // Scores: q·k · scale_multiplier, or q·k / sqrt(head_dim) when it is 0 (HF's Qwen2
  // and GPT-2 divide); then tanh(s / softcap) · softcap when softcap > 0 (Gemma 2).
  float scale_multiplier = 0.0f;
  float softcap = 0.0f;
  // > 0: query i sees key j iff 0 <= i - j < window (HF's sliding window); 0: all j <= i.
  int64_t window = 0;
};

// Causal self-attention of one sequence of `tokens` tokens, as HF's eager attention:
//   context = softmax(scaled(Q Kᵀ) + causal (and sliding-window) mask) V
// with the softmax in float32 after subtracting the row maximum. q and context are
// [tokens, ld_q] with the shard's query heads side by side; k and v are
// [tokens, ld_kv] with its key/value heads. Q Kᵀ and P V are computed by the
// kernel's own tiles of sixteen lanes (four queries at a time, each reading only the
// keys its causal window can see; two AVX2 vectors or one AVX-512 vector, as
// ActiveIsa() says, with the same bits either way), every dot product summed in order
// with one FMA per term as an sgemm would; no BLAS call, so several threads may run
// it at once (on different heads or sequences). `scratch` is reused across calls (one
// per thread).
void CausalAttention(const float* q, const float* k, const float* v, int64_t ld_q, int64_t ld_kv,
                     int64_t tokens, const AttentionHeads& heads, float* context,
                     std::vector<float>* scratch);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_ATTENTION_H_
