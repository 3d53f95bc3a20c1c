#ifndef ACTEX_MODEL_MOE_FAMILY_CONFIGS_H_
#define ACTEX_MODEL_MOE_FAMILY_CONFIGS_H_

#include <expected>
#include <string>

#include "model/config_fields.h"
#include "model/model_config.h"

namespace actex {

// The mixture-of-experts families' config.json, read as HF transformers 4.51's config
// classes and modeling files use them (family_configs.h registers them). Each fills
// ModelConfig::moe and refuses, naming the field, what would change the math and is not
// implemented: router_jitter_noise other than 0 (training only), olmoe's clip_qkv, a
// shared expert of width 0, top-k above the number of experts.

// mixtral's experts (num_local_experts, num_experts_per_tok; intermediate_size is the
// expert width; top-k always renormalised), after Mistral's attention features.
std::expected<void, std::string> MixtralExperts(const ConfigFields& fields, ModelConfig& config);
// qwen3_moe's experts (num_experts, moe_intermediate_size, norm_topk_prob,
// mlp_only_layers, decoder_sparse_step), after Qwen3's attention features.
std::expected<void, std::string> Qwen3MoeExperts(const ConfigFields& fields, ModelConfig& config);
// qwen2_moe: Qwen2's attention (q/k/v biases, head_dim = hidden / heads) and experts
// like qwen3_moe's plus the sigmoid-gated shared expert.
std::expected<void, std::string> Qwen2Moe(const ConfigFields& fields, ModelConfig& config);
// olmoe: q/k RMSNorm over the whole projection, every layer routed.
std::expected<void, std::string> Olmoe(const ConfigFields& fields, ModelConfig& config);

}  // namespace actex

#endif  // ACTEX_MODEL_MOE_FAMILY_CONFIGS_H_
