// Defaults are those of HF 4.51's config classes (MixtralConfig, Qwen2MoeConfig,
// Qwen3MoeConfig, OlmoeConfig), which apply when config.json omits a field.

#include "model/moe_family_configs.h"

namespace actex {
namespace {

using Result = std::expected<void, std::string>;

struct RoutingDefaults {
  const char* experts_field;  // num_local_experts (mixtral) or num_experts
  int experts, top_k;
};

// The router's size: how many experts, how many a token uses.
Result ReadRouter(const ConfigFields& f, const RoutingDefaults& defaults, MoeConfig& moe) {
  auto experts = f.OptionalInt(defaults.experts_field, defaults.experts);
  ACTEX_TRY(experts);
  auto top_k = f.OptionalInt("num_experts_per_tok", defaults.top_k);
  ACTEX_TRY(top_k);
  if (*top_k > *experts) {
    return std::unexpected(f.path() + ": num_experts_per_tok " + std::to_string(*top_k) +
                           " is more than " + defaults.experts_field + " " +
                           std::to_string(*experts));
  }
  moe.experts = *experts;
  moe.top_k = *top_k;
  return {};
}

// What Qwen2-MoE and Qwen3-MoE share: moe_intermediate_size, norm_topk_prob, and which
// layers are routed: layer l iff l is not in mlp_only_layers and (l + 1) is a multiple
// of decoder_sparse_step (HF's Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer).
Result QwenExperts(const ConfigFields& f, const RoutingDefaults& defaults, int expert_width,
                   ModelConfig& c) {
  ACTEX_TRY(ReadRouter(f, defaults, c.moe));
  auto width = f.OptionalInt("moe_intermediate_size", expert_width);
  ACTEX_TRY(width);
  auto renormalize = f.OptionalBool("norm_topk_prob", false);
  ACTEX_TRY(renormalize);
  auto dense_layers = f.OptionalIndexList("mlp_only_layers", c.layers);
  ACTEX_TRY(dense_layers);
  auto step = f.OptionalInt("decoder_sparse_step", 1);
  ACTEX_TRY(step);
  c.moe.expert_intermediate = *width;
  c.moe.renormalize = *renormalize;
  c.moe.layer_sparse.assign(static_cast<size_t>(c.layers), false);
  for (int layer = 0; layer < c.layers; ++layer)
    c.moe.layer_sparse[layer] = (layer + 1) % *step == 0;
  for (int layer : *dense_layers) c.moe.layer_sparse[layer] = false;
  return {};
}

}  // namespace

Result MixtralExperts(const ConfigFields& f, ModelConfig& c) {
  // HF adds uniform noise to the router's input only while training.
  auto jitter = f.OptionalFloat("router_jitter_noise", 0.0f);
  ACTEX_TRY(jitter);
  if (*jitter != 0.0f) {
    return std::unexpected(f.path() + ": router_jitter_noise " + std::to_string(*jitter) +
                           " is not supported: inference routes without noise; set it to 0");
  }
  ACTEX_TRY(ReadRouter(f, {"num_local_experts", 8, 2}, c.moe));
  c.moe.expert_intermediate = c.intermediate;  // no dense MLP: intermediate_size is an expert's
  c.moe.renormalize = true;                    // Mixtral has no norm_topk_prob: always
  c.moe.layer_sparse.assign(static_cast<size_t>(c.layers), true);
  return {};
}

Result Qwen3MoeExperts(const ConfigFields& f, ModelConfig& c) {
  return QwenExperts(f, {"num_experts", 128, 8}, 768, c);
}

Result Qwen2Moe(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("hidden_act", "silu", {"silu"}));
  ACTEX_TRY(f.RefuseUnless("use_sliding_window", false));
  // HF 4.51's Qwen2MoeAttention always has q/k/v biases and splits hidden_size evenly
  // over the heads (later versions read qkv_bias and head_dim).
  ACTEX_TRY(f.RefuseUnless("qkv_bias", true));
  if (c.head_dim * c.heads != c.hidden) {
    return std::unexpected(f.path() + ": head_dim " + std::to_string(c.head_dim) +
                           " is not supported: HF 4.51's Qwen2-MoE uses hidden_size / "
                           "num_attention_heads = " +
                           std::to_string(c.hidden / c.heads));
  }
  c.qkv_bias = true;
  ACTEX_TRY(QwenExperts(f, {"num_experts", 60, 4}, 1408, c));
  // HF builds the shared expert whatever its width; a width of 0 would add nothing.
  auto shared = f.OptionalInt("shared_expert_intermediate_size", 5632);
  ACTEX_TRY(shared);
  c.moe.shared_expert_intermediate = *shared;
  return {};
}

Result Olmoe(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("hidden_act", "silu", {"silu"}));
  ACTEX_TRY(f.RefuseIfSet("clip_qkv", "actex does not clip q/k/v; set it to null"));
  auto attention_bias = f.OptionalBool("attention_bias", false);
  ACTEX_TRY(attention_bias);
  c.qkv_bias = c.o_bias = *attention_bias;
  c.qk_norm = c.qk_norm_whole_projection = true;
  ACTEX_TRY(ReadRouter(f, {"num_experts", 64, 8}, c.moe));
  auto renormalize = f.OptionalBool("norm_topk_prob", false);
  ACTEX_TRY(renormalize);
  c.moe.renormalize = *renormalize;
  c.moe.expert_intermediate = c.intermediate;  // every layer is routed
  c.moe.layer_sparse.assign(static_cast<size_t>(c.layers), true);
  return {};
}

}  // namespace actex
