#ifndef ACTEX_MODEL_MODEL_CONFIG_H_
#define ACTEX_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

namespace actex {

// How a family normalises: HF's RMSNorm `w · x̂`, Gemma's `(1 + w) · x̂`, or LayerNorm
// with a bias (GPT-2).
enum class NormKind { kRms, kRmsOnePlusWeight, kLayerNorm };
// The MLP: down(silu(gate(n)) · up(n)), down(gelu_tanh(gate(n)) · up(n)) (Gemma's
// GeGLU), or c_proj(gelu_tanh(c_fc(n))) (GPT-2, no gate).
enum class MlpKind { kGatedSilu, kGatedGeluTanh, kGeluTanh };
// Rotary inverse frequencies: HF's default, `linear` (all divided by factor) or `llama3`.
enum class RopeScaling { kNone, kLinear, kLlama3 };

// A mixture-of-experts MLP (mixtral, qwen2_moe, qwen3_moe, olmoe): per token, a router
// (a linear layer [experts, hidden]) scores every expert, a softmax over all of them
// gives probabilities, the top_k largest pick the experts, and the experts' outputs are
// summed weighted by those probabilities (renormalised to sum 1 when `renormalize`).
// experts == 0: a dense family.
struct MoeConfig {
  int experts = 0;                     // num_local_experts (mixtral) or num_experts
  int top_k = 0;                       // num_experts_per_tok
  int expert_intermediate = 0;         // moe_intermediate_size (mixtral: intermediate_size)
  bool renormalize = true;             // norm_topk_prob (mixtral: always)
  int shared_expert_intermediate = 0;  // qwen2_moe's sigmoid-gated shared expert; 0: none
  std::vector<bool> layer_sparse{};    // [layers]: routed layers; the others are a dense MLP
};

struct RopeConfig {
  float theta = 10000.0f;
  RopeScaling scaling = RopeScaling::kNone;
  float factor = 1.0f;
  float low_freq_factor = 1.0f, high_freq_factor = 4.0f;  // llama3
  float original_max_positions = 8192.0f;                 // llama3
};

// What a HuggingFace config.json says about the math of a supported family
// (model_type qwen2, llama, mistral, qwen3, gemma2, gemma3_text, gpt2, and the mixtures
// of experts mixtral, qwen2_moe, qwen3_moe, olmoe). Anything in
// the file that would change the math and is not implemented is refused by
// LoadModelConfig, naming the field.
// Rotary tables grow to the largest position seen; this bounds them (Qwen2.5's longest
// context is 131072).
inline constexpr int32_t kRotaryPositionLimit = (1 << 20) + 1;

struct ModelConfig {
  std::string model_type;
  std::string name;  // "_name_or_path" or the folder's name
  int vocab_size = 0;
  int hidden = 0;               // hidden_size (GPT-2: n_embd)
  int intermediate = 0;         // intermediate_size (GPT-2: n_inner, default 4·n_embd)
  int layers = 0;               // num_hidden_layers (GPT-2: n_layer)
  int heads = 0;                // num_attention_heads (GPT-2: n_head)
  int kv_heads = 0;             // num_key_value_heads (GPT-2: n_head)
  int head_dim = 0;             // head_dim when given, else hidden / heads
  float rope_theta = 10000.0f;  // kept equal to rope.theta (global layers)
  float rms_norm_eps = 1e-6f;   // the eps of every norm (GPT-2: layer_norm_epsilon)
  bool tie_word_embeddings = false;
  std::string torch_dtype;  // "float32", "bfloat16" or "float16"
  std::optional<int32_t> bos_token_id;

  // Family features (the defaults are Qwen2's).
  NormKind norm = NormKind::kRms;
  MlpKind mlp = MlpKind::kGatedSilu;
  bool qkv_bias = true;   // q/k/v projections have biases (GPT-2: c_attn's)
  bool o_bias = false;    // o_proj has a bias (GPT-2: attn.c_proj's)
  bool mlp_bias = false;  // gate/up/down (GPT-2: c_fc/c_proj) have biases
  bool qk_norm = false;   // RMSNorm on q and k before rotary (Qwen3, Gemma 3, OLMoE)
  // Where qk_norm's mean of squares runs: each head's head_dim (Qwen3, Gemma 3; weights
  // [head_dim]) or the whole q_proj / k_proj output, all heads at once (OLMoE; weights
  // [heads*head_dim] and [kv_heads*head_dim]).
  bool qk_norm_whole_projection = false;
  bool sandwich_norms = false;  // Gemma: norms after attention and MLP too
  bool rotary = true;           // false: learned absolute positions (GPT-2's wpe)
  int max_positions = 0;        // GPT-2's n_positions (rows of wpe)
  float embed_scale = 0.0f;     // > 0: embeddings multiplied by it (Gemma: sqrt(hidden))
  // Attention scores are q·k multiplied by this; 0 divides by sqrt(head_dim) instead
  // (HF's Qwen2 and GPT-2 divide, the others multiply).
  float attention_multiplier = 0.0f;
  float attn_softcap = 0.0f;             // > 0: scores = tanh(scores / cap) · cap (Gemma 2)
  float final_softcap = 0.0f;            // logits only (not a site); recorded, never applied
  int sliding_window = 0;                // > 0: query i sees key j iff 0 <= i - j < sliding_window
  std::vector<bool> layer_slides;        // [layers]: which layers use the window
  RopeConfig rope;                       // global (full-attention) layers
  std::optional<RopeConfig> local_rope;  // sliding layers, when they differ (Gemma 3)

  MoeConfig moe;  // experts == 0 for a dense family

  // Whether `layer`'s MLP is a mixture of experts (with a router) rather than dense.
  bool IsSparse(int layer) const { return moe.experts > 0 && moe.layer_sparse[layer]; }
  bool Slides(int layer) const { return sliding_window > 0 && layer_slides[layer]; }
  const RopeConfig& RopeOf(int layer) const {
    return local_rope && Slides(layer) ? *local_rope : rope;
  }
  // How many positions a sequence may use: a learned-position model's table
  // (GPT-2's n_positions), else kRotaryPositionLimit. The one owner of this limit:
  // the forward pass refuses positions at or past it, and PlanExtraction caps
  // --max-seq-len at it so that no document reaches it.
  int32_t PositionLimit() const { return rotary ? kRotaryPositionLimit : max_positions; }
  // What PositionLimit comes from, for messages ("n_positions 1024 in config.json").
  std::string PositionLimitSource() const;
};

}  // namespace actex

#endif  // ACTEX_MODEL_MODEL_CONFIG_H_
