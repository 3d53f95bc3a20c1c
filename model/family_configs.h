#ifndef ACTEX_MODEL_FAMILY_CONFIGS_H_
#define ACTEX_MODEL_FAMILY_CONFIGS_H_

#include <expected>
#include <string>

#include "model/config_fields.h"
#include "model/model_config.h"

namespace actex {

// Fills the family's features of `config` (whose common fields are read) from `fields`.
using FamilyParser = std::expected<void, std::string> (*)(const ConfigFields& fields,
                                                          ModelConfig& config);
const FamilyParser* FindFamily(const std::string& model_type);  // null: unsupported
std::string SupportedFamilies();                                // "qwen2, llama, ..."

}  // namespace actex

#endif  // ACTEX_MODEL_FAMILY_CONFIGS_H_
