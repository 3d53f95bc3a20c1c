#ifndef ACTEX_MODEL_MODEL_CONFIG_H_
#define ACTEX_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

namespace actex {

// The subset of a HuggingFace config.json that the Qwen2 forward pass depends on.
struct ModelConfig {
  std::string model_type;   // "qwen2"; anything else is refused by LoadModelConfig
  std::string name;         // "_name_or_path" or the folder's name
  int vocab_size = 0;
  int hidden = 0;           // hidden_size
  int intermediate = 0;     // intermediate_size
  int layers = 0;           // num_hidden_layers
  int heads = 0;            // num_attention_heads
  int kv_heads = 0;         // num_key_value_heads
  int head_dim = 0;         // hidden / heads
  float rope_theta = 10000.0f;
  float rms_norm_eps = 1e-6f;
  bool tie_word_embeddings = false;
  std::string torch_dtype;  // "float32", "bfloat16" or "float16"
  std::optional<int32_t> bos_token_id;
};

// Reads `model_dir`/config.json. Errors name the file and the missing or
// inconsistent field (e.g. hidden_size not divisible by num_attention_heads).
std::expected<ModelConfig, std::string> LoadModelConfig(const std::string& model_dir);

}  // namespace actex

#endif  // ACTEX_MODEL_MODEL_CONFIG_H_
