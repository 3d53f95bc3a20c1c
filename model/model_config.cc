#include "model/model_config.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace actex {
namespace {

using Json = nlohmann::json;

// Reads a required positive integer field; errors name the file and the field.
std::expected<int, std::string> RequiredPositiveInt(const Json& config, const std::string& path,
                                                    const char* field) {
  auto it = config.find(field);
  if (it == config.end() || it->is_null()) {
    return std::unexpected(path + ": missing required field \"" + field + "\"");
  }
  if (!it->is_number_integer()) {
    return std::unexpected(path + ": field \"" + field + "\" must be an integer, got " +
                           it->dump());
  }
  const int64_t value = it->get<int64_t>();
  if (value <= 0 || value > (int64_t{1} << 30)) {
    return std::unexpected(path + ": field \"" + field + "\" must be a positive integer, got " +
                           std::to_string(value));
  }
  return static_cast<int>(value);
}

// Reads an optional float field, keeping `fallback` when it is absent or null.
std::expected<float, std::string> OptionalFloat(const Json& config, const std::string& path,
                                                const char* field, float fallback) {
  auto it = config.find(field);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_number()) {
    return std::unexpected(path + ": field \"" + field + "\" must be a number, got " + it->dump());
  }
  return it->get<float>();
}

std::string FolderName(const std::string& model_dir) {
  std::filesystem::path path = std::filesystem::path(model_dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "dir/" normalises to "dir/"
  std::string name = path.filename().string();
  if (name.empty() || name == ".") {
    name = std::filesystem::absolute(path).lexically_normal().filename().string();
  }
  return name;
}

std::expected<ModelConfig, std::string> ParseConfig(const Json& json, const std::string& path,
                                                    const std::string& model_dir) {
  if (!json.is_object()) return std::unexpected(path + ": top level is not a JSON object");
  ModelConfig config;

  auto type = json.find("model_type");
  if (type == json.end() || !type->is_string()) {
    return std::unexpected(path + ": missing required string field \"model_type\"");
  }
  config.model_type = type->get<std::string>();
  if (config.model_type != "qwen2") {
    return std::unexpected("model_type \"" + config.model_type + "\" in " + path +
                           " is not supported; actex supports: qwen2");
  }

  auto name = json.find("_name_or_path");
  if (name != json.end() && name->is_string() && !name->get<std::string>().empty()) {
    config.name = name->get<std::string>();
  } else {
    config.name = FolderName(model_dir);
  }

  struct IntField {
    const char* key;
    int* target;
  };
  for (const IntField& field :
       {IntField{"vocab_size", &config.vocab_size}, IntField{"hidden_size", &config.hidden},
        IntField{"intermediate_size", &config.intermediate},
        IntField{"num_hidden_layers", &config.layers},
        IntField{"num_attention_heads", &config.heads}}) {
    auto value = RequiredPositiveInt(json, path, field.key);
    if (!value) return std::unexpected(value.error());
    *field.target = *value;
  }
  // Qwen2Config turns an explicit null into one KV head per query head (no GQA).
  auto kv = json.find("num_key_value_heads");
  if (kv != json.end() && kv->is_null()) {
    config.kv_heads = config.heads;
  } else {
    auto value = RequiredPositiveInt(json, path, "num_key_value_heads");
    if (!value) return std::unexpected(value.error());
    config.kv_heads = *value;
  }

  if (config.hidden % config.heads != 0) {
    return std::unexpected(path + ": hidden_size " + std::to_string(config.hidden) +
                           " is not divisible by num_attention_heads " +
                           std::to_string(config.heads));
  }
  if (config.heads % config.kv_heads != 0) {
    return std::unexpected(path + ": num_attention_heads " + std::to_string(config.heads) +
                           " is not divisible by num_key_value_heads " +
                           std::to_string(config.kv_heads));
  }
  config.head_dim = config.hidden / config.heads;
  if (config.head_dim % 2 != 0) {
    // rotate_half pairs dimension j with j + head_dim/2.
    return std::unexpected(path + ": head dimension " + std::to_string(config.head_dim) +
                           " (hidden_size / num_attention_heads) must be even for rotary "
                           "embeddings");
  }

  auto theta = OptionalFloat(json, path, "rope_theta", 10000.0f);
  if (!theta) return std::unexpected(theta.error());
  if (!(*theta > 0.0f)) return std::unexpected(path + ": rope_theta must be positive");
  config.rope_theta = *theta;
  auto eps = OptionalFloat(json, path, "rms_norm_eps", 1e-6f);
  if (!eps) return std::unexpected(eps.error());
  if (!(*eps >= 0.0f)) return std::unexpected(path + ": rms_norm_eps must not be negative");
  config.rms_norm_eps = *eps;

  auto tie = json.find("tie_word_embeddings");
  if (tie != json.end() && !tie->is_null()) {
    if (!tie->is_boolean()) {
      return std::unexpected(path + ": field \"tie_word_embeddings\" must be true or false");
    }
    config.tie_word_embeddings = tie->get<bool>();
  }

  config.torch_dtype = "float32";
  auto dtype = json.find("torch_dtype");
  if (dtype != json.end() && !dtype->is_null()) {
    if (!dtype->is_string()) {
      return std::unexpected(path + ": field \"torch_dtype\" must be a string");
    }
    config.torch_dtype = dtype->get<std::string>();
    if (config.torch_dtype != "float32" && config.torch_dtype != "bfloat16" &&
        config.torch_dtype != "float16") {
      return std::unexpected(path + ": torch_dtype \"" + config.torch_dtype +
                             "\" is not supported; expected float32, bfloat16 or float16");
    }
  }

  auto bos = json.find("bos_token_id");
  if (bos != json.end() && !bos->is_null()) {
    if (!bos->is_number_integer()) {
      return std::unexpected(path + ": field \"bos_token_id\" must be an integer or null");
    }
    config.bos_token_id = bos->get<int32_t>();
  }

  // Features that would change the math: refuse rather than compute something else.
  auto act = json.find("hidden_act");
  if (act != json.end() && !act->is_null() && *act != "silu") {
    return std::unexpected(path + ": hidden_act " + act->dump() +
                           " is not supported; Qwen2 in actex uses silu");
  }
  auto sliding = json.find("use_sliding_window");
  if (sliding != json.end() && sliding->is_boolean() && sliding->get<bool>()) {
    return std::unexpected(path +
                           ": use_sliding_window true is not supported (full causal attention "
                           "only)");
  }
  auto scaling = json.find("rope_scaling");
  if (scaling != json.end() && !scaling->is_null()) {
    return std::unexpected(path + ": rope_scaling " + scaling->dump() +
                           " is not supported; actex implements plain rotary embeddings");
  }
  return config;
}

}  // namespace

std::expected<ModelConfig, std::string> LoadModelConfig(const std::string& model_dir) {
  const std::string path = (std::filesystem::path(model_dir) / "config.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::unexpected("cannot open " + path + ": " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  Json json = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return std::unexpected(path + ": not valid JSON");
  try {
    return ParseConfig(json, path, model_dir);
  } catch (const Json::exception& error) {
    // get<T>() throws on out-of-range numbers; report it as a config error.
    return std::unexpected(path + ": " + error.what());
  }
}

}  // namespace actex
