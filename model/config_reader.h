#ifndef ACTEX_MODEL_CONFIG_READER_H_
#define ACTEX_MODEL_CONFIG_READER_H_

#include <expected>
#include <nlohmann/json.hpp>
#include <string>

#include "model/model_config.h"

namespace actex {

// Reads `model_dir`/config.json. Errors name the file and the missing, inconsistent or
// unsupported field (e.g. hidden_size not divisible by num_attention_heads, an unknown
// rope_type).
std::expected<ModelConfig, std::string> LoadModelConfig(const std::string& model_dir);

// LoadModelConfig on a parsed file (`path` for messages, `model_dir` for the name).
std::expected<ModelConfig, std::string> ParseModelConfig(const nlohmann::json& json,
                                                         const std::string& path,
                                                         const std::string& model_dir);

}  // namespace actex

#endif  // ACTEX_MODEL_CONFIG_READER_H_
