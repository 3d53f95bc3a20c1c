// Each supported model_type's features, read from config.json as HF transformers 4.51's
// config class and modeling file use them. A field that would change the math and is
// not implemented is refused here, naming it.

#include "model/family_configs.h"

#include <cmath>
#include <map>

#include "model/moe_family_configs.h"

namespace actex {
namespace {

using Result = std::expected<void, std::string>;

Result Qwen2(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("hidden_act", "silu", {"silu"}));
  ACTEX_TRY(f.RefuseUnless("use_sliding_window", false));
  ACTEX_TRY(f.RefuseIfSet("rope_scaling", "Qwen2 in actex uses plain rotary embeddings"));
  c.qkv_bias = true;
  return {};
}

Result Llama(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("hidden_act", "silu", {"silu"}));
  auto attention_bias = f.OptionalBool("attention_bias", false);
  ACTEX_TRY(attention_bias);
  auto mlp_bias = f.OptionalBool("mlp_bias", false);
  ACTEX_TRY(mlp_bias);
  c.qkv_bias = c.o_bias = *attention_bias;
  c.mlp_bias = *mlp_bias;
  return {};
}

Result Mistral(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("hidden_act", "silu", {"silu"}));
  c.qkv_bias = false;
  auto window = f.OptionalInt("sliding_window", 0);
  ACTEX_TRY(window);
  c.sliding_window = *window;
  c.layer_slides.assign(static_cast<size_t>(c.layers), true);
  return {};
}

Result Qwen3(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("hidden_act", "silu", {"silu"}));
  ACTEX_TRY(f.RefuseUnless("use_sliding_window", false));
  // HF 4.51's eager mask applies sliding_window whenever it is set, whatever
  // use_sliding_window says; later versions do not. Refuse rather than pick one.
  ACTEX_TRY(f.RefuseIfSet("sliding_window",
                          "HF versions disagree on whether Qwen3 applies it; set it to null"));
  auto attention_bias = f.OptionalBool("attention_bias", false);
  ACTEX_TRY(attention_bias);
  c.qkv_bias = c.o_bias = *attention_bias;
  c.qk_norm = true;
  return {};
}

// What Gemma 2 and Gemma 3 share: GeGLU, (1 + w) norms, sandwich norms, scaled
// embeddings and query_pre_attn_scalar.
Result GemmaCommon(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("hidden_activation", "gelu_pytorch_tanh", {"gelu_pytorch_tanh"}));
  auto attention_bias = f.OptionalBool("attention_bias", false);
  ACTEX_TRY(attention_bias);
  c.qkv_bias = c.o_bias = *attention_bias;
  c.norm = NormKind::kRmsOnePlusWeight;
  c.mlp = MlpKind::kGatedGeluTanh;
  c.sandwich_norms = true;
  // HF: torch.tensor(hidden_size ** 0.5) in float32.
  c.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(c.hidden)));
  auto scalar = f.RequiredFloat("query_pre_attn_scalar");
  ACTEX_TRY(scalar);
  if (!(*scalar > 0.0f)) return std::unexpected(f.path() + ": query_pre_attn_scalar must be > 0");
  c.attention_multiplier = static_cast<float>(std::pow(static_cast<double>(*scalar), -0.5));
  auto final_cap = f.OptionalFloat("final_logit_softcapping", 0.0f);
  ACTEX_TRY(final_cap);
  c.final_softcap = *final_cap;
  auto window = f.OptionalInt("sliding_window", 4096);
  ACTEX_TRY(window);
  c.sliding_window = *window;
  return {};
}

Result Gemma2(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(GemmaCommon(f, c));
  ACTEX_TRY(f.RefuseIfSet("rope_scaling", "Gemma 2 uses plain rotary embeddings"));
  auto cap = f.OptionalFloat("attn_logit_softcapping", 0.0f);
  ACTEX_TRY(cap);
  c.attn_softcap = *cap;
  for (int layer = 0; layer < c.layers; ++layer) c.layer_slides[layer] = layer % 2 == 0;
  return {};
}

Result Gemma3Text(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(GemmaCommon(f, c));
  // HF 4.51's Gemma 3 attention does not apply it; later versions do.
  ACTEX_TRY(f.RefuseIfSet("attn_logit_softcapping",
                          "HF versions disagree on whether Gemma 3 applies it"));
  c.qk_norm = true;
  auto pattern = f.OptionalInt("sliding_window_pattern", 6);
  ACTEX_TRY(pattern);
  for (int layer = 0; layer < c.layers; ++layer) {
    c.layer_slides[layer] = (layer + 1) % *pattern != 0;
  }
  if (f.Has("layer_types")) {
    return std::unexpected(f.path() +
                           ": layer_types is not supported; actex reads "
                           "sliding_window_pattern");
  }
  auto local_theta = f.OptionalFloat("rope_local_base_freq", 10000.0f);
  ACTEX_TRY(local_theta);
  c.local_rope = RopeConfig{.theta = *local_theta};
  return {};
}

Result Gpt2(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(f.RequireOneOf("activation_function", "gelu_new", {"gelu_new", "gelu_pytorch_tanh"}));
  ACTEX_TRY(f.RefuseUnless("scale_attn_weights", true));
  ACTEX_TRY(f.RefuseUnless("scale_attn_by_inverse_layer_idx", false));
  ACTEX_TRY(f.RefuseUnless("add_cross_attention", false));
  auto positions = f.OptionalInt("n_positions", 1024);
  ACTEX_TRY(positions);
  c.max_positions = *positions;
  c.norm = NormKind::kLayerNorm;
  c.mlp = MlpKind::kGeluTanh;
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.rotary = false;
  return {};
}

// The mixtures of experts whose attention is a dense family's.
Result Mixtral(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(Mistral(f, c));
  return MixtralExperts(f, c);
}

Result Qwen3Moe(const ConfigFields& f, ModelConfig& c) {
  ACTEX_TRY(Qwen3(f, c));
  return Qwen3MoeExperts(f, c);
}

const std::map<std::string, FamilyParser>& Families() {
  static const auto* families = new std::map<std::string, FamilyParser>{
      {"qwen2", &Qwen2},        {"llama", &Llama},     {"mistral", &Mistral},
      {"qwen3", &Qwen3},        {"gemma2", &Gemma2},   {"gemma3_text", &Gemma3Text},
      {"gpt2", &Gpt2},          {"mixtral", &Mixtral}, {"qwen2_moe", &Qwen2Moe},
      {"qwen3_moe", &Qwen3Moe}, {"olmoe", &Olmoe}};
  return *families;
}

}  // namespace

const FamilyParser* FindFamily(const std::string& model_type) {
  auto it = Families().find(model_type);
  return it == Families().end() ? nullptr : &it->second;
}

std::string SupportedFamilies() {
  std::string list;
  for (const auto& [name, parser] : Families()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

}  // namespace actex
