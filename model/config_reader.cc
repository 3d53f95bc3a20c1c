#include "model/config_reader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/whole_file.h"
#include "model/config_fields.h"
#include "model/family_configs.h"

namespace actex {
namespace {

std::string FolderName(const std::string& model_dir) {
  std::filesystem::path path = std::filesystem::path(model_dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "dir/" normalises to "dir/"
  std::string name = path.filename().string();
  if (name.empty() || name == ".") {
    name = std::filesystem::absolute(path).lexically_normal().filename().string();
  }
  return name;
}

// num_key_value_heads: required; an explicit null means one per query head.
std::expected<int, std::string> KeyValueHeads(const ConfigFields& f, int heads) {
  if (f.Has("num_key_value_heads")) return f.RequiredInt("num_key_value_heads");
  if (f.IsNull("num_key_value_heads")) return heads;
  return f.RequiredInt("num_key_value_heads");  // the error naming the missing field
}

// Fields every family has, under their HF names (GPT-2's differ).
std::expected<void, std::string> ParseCommon(const ConfigFields& f, ModelConfig& config) {
  const bool gpt2 = config.model_type == "gpt2";
  struct IntField {
    const char* key;
    int* target;
  };
  for (const IntField& field : {IntField{"vocab_size", &config.vocab_size},
                                IntField{gpt2 ? "n_embd" : "hidden_size", &config.hidden},
                                IntField{gpt2 ? "n_layer" : "num_hidden_layers", &config.layers},
                                IntField{gpt2 ? "n_head" : "num_attention_heads", &config.heads}}) {
    auto value = f.RequiredInt(field.key);
    if (!value) return std::unexpected(value.error());
    *field.target = *value;
  }
  if (gpt2) {
    config.kv_heads = config.heads;
    auto inner = f.OptionalInt("n_inner", 4 * config.hidden);
    if (!inner) return std::unexpected(inner.error());
    config.intermediate = *inner;
  } else {
    auto inter = f.RequiredInt("intermediate_size");
    if (!inter) return std::unexpected(inter.error());
    config.intermediate = *inter;
    // HF turns an explicit null into one KV head per query head (no GQA); an absent
    // field takes the config class's default, which differs by family, so it is required.
    auto kv = KeyValueHeads(f, config.heads);
    if (!kv) return std::unexpected(kv.error());
    config.kv_heads = *kv;
  }
  auto head_dim = f.OptionalInt("head_dim", 0);
  if (!head_dim) return std::unexpected(head_dim.error());
  config.head_dim = *head_dim;
  if (config.head_dim == 0) {
    if (config.hidden % config.heads != 0) {
      return std::unexpected(f.path() + ": hidden_size " + std::to_string(config.hidden) +
                             " is not divisible by num_attention_heads " +
                             std::to_string(config.heads));
    }
    config.head_dim = config.hidden / config.heads;
  }
  if (config.heads % config.kv_heads != 0) {
    return std::unexpected(f.path() + ": num_attention_heads " + std::to_string(config.heads) +
                           " is not divisible by num_key_value_heads " +
                           std::to_string(config.kv_heads));
  }
  if (!gpt2 && config.head_dim % 2 != 0) {
    // rotate_half pairs dimension j with j + head_dim/2.
    return std::unexpected(f.path() + ": head dimension " + std::to_string(config.head_dim) +
                           " must be even for rotary embeddings");
  }

  auto eps = f.OptionalFloat(gpt2 ? "layer_norm_epsilon" : "rms_norm_eps", gpt2 ? 1e-5f : 1e-6f);
  if (!eps) return std::unexpected(eps.error());
  if (!(*eps >= 0.0f)) return std::unexpected(f.path() + ": the norm epsilon must not be negative");
  config.rms_norm_eps = *eps;

  // Gemma and GPT-2 tie by default (their HF config classes do).
  const bool tied_default = gpt2 || config.model_type.starts_with("gemma");
  auto tie = f.OptionalBool("tie_word_embeddings", tied_default);
  if (!tie) return std::unexpected(tie.error());
  config.tie_word_embeddings = *tie;

  auto dtype = f.OptionalString("torch_dtype", "float32");
  if (!dtype) return std::unexpected(dtype.error());
  config.torch_dtype = *dtype;
  if (config.torch_dtype != "float32" && config.torch_dtype != "bfloat16" &&
      config.torch_dtype != "float16") {
    return std::unexpected(f.path() + ": torch_dtype \"" + config.torch_dtype +
                           "\" is not supported; expected float32, bfloat16 or float16");
  }
  auto bos = f.OptionalInt("bos_token_id", -1, /*allow_zero=*/true);
  if (!bos) return std::unexpected(bos.error());
  if (*bos >= 0) config.bos_token_id = *bos;

  // Parallel attention and MLP (GPT-NeoX, GPT-J style) is another network.
  if (auto refused = f.RefuseUnless("use_parallel_residual", false); !refused) return refused;
  if (!gpt2) {
    auto rope = f.Rope();
    if (!rope) return std::unexpected(rope.error());
    config.rope = *rope;
    config.rope_theta = rope->theta;
  }
  return {};
}

}  // namespace

std::expected<ModelConfig, std::string> ParseModelConfig(const nlohmann::json& json,
                                                         const std::string& path,
                                                         const std::string& model_dir) {
  if (!json.is_object()) return std::unexpected(path + ": top level is not a JSON object");
  const ConfigFields fields(json, path);
  ModelConfig config;
  auto type = fields.OptionalString("model_type", "");
  if (!type) return std::unexpected(type.error());
  if (type->empty()) {
    return std::unexpected(path + ": missing required string field \"model_type\"");
  }
  config.model_type = *type;
  const FamilyParser* family = FindFamily(config.model_type);
  if (family == nullptr) {
    return std::unexpected("model_type \"" + config.model_type + "\" in " + path +
                           " is not supported; actex supports: " + SupportedFamilies());
  }
  auto name = fields.OptionalString("_name_or_path", "");
  if (!name) return std::unexpected(name.error());
  config.name = name->empty() ? FolderName(model_dir) : *name;
  if (auto common = ParseCommon(fields, config); !common) return std::unexpected(common.error());
  config.layer_slides.assign(static_cast<size_t>(config.layers), false);
  if (auto features = (*family)(fields, config); !features) {
    return std::unexpected(features.error());
  }
  return config;
}

std::expected<ModelConfig, std::string> LoadModelConfig(const std::string& model_dir) {
  const std::string path = (std::filesystem::path(model_dir) / "config.json").string();
  auto text = ReadWholeFile(path);
  if (!text) return std::unexpected(text.error());
  nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return std::unexpected(path + ": not valid JSON");
  try {
    return ParseModelConfig(json, path, model_dir);
  } catch (const nlohmann::json::exception& error) {
    // get<T>() throws on out-of-range numbers; report it as a config error.
    return std::unexpected(path + ": " + error.what());
  }
}

}  // namespace actex
