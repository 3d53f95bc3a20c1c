#include "model/config_fields.h"

namespace actex {

using Json = nlohmann::json;

bool ConfigFields::Has(const char* field) const {
  auto it = json_.find(field);
  return it != json_.end() && !it->is_null();
}

bool ConfigFields::IsNull(const char* field) const {
  auto it = json_.find(field);
  return it != json_.end() && it->is_null();
}

std::expected<int, std::string> ConfigFields::RequiredInt(const char* field) const {
  if (!Has(field)) return std::unexpected(path_ + ": missing required field \"" + field + "\"");
  return OptionalInt(field, 0);
}

std::expected<int, std::string> ConfigFields::OptionalInt(const char* field, int fallback,
                                                          bool allow_zero) const {
  if (!Has(field)) return fallback;
  const Json& value = json_.at(field);
  if (!value.is_number_integer()) {
    return std::unexpected(path_ + ": field \"" + field + "\" must be an integer, got " +
                           value.dump());
  }
  const int64_t number = value.get<int64_t>();
  constexpr int64_t kLargest = int64_t{1} << 30;  // past any real model's sizes
  if (number < (allow_zero ? 0 : 1) || number > kLargest) {
    return std::unexpected(path_ + ": field \"" + field + "\" must be an integer from " +
                           (allow_zero ? "0" : "1") + " to " + std::to_string(kLargest) + ", got " +
                           std::to_string(number));
  }
  return static_cast<int>(number);
}

std::expected<float, std::string> ConfigFields::RequiredFloat(const char* field) const {
  if (!Has(field)) return std::unexpected(path_ + ": missing required field \"" + field + "\"");
  return OptionalFloat(field, 0.0f);
}

std::expected<float, std::string> ConfigFields::OptionalFloat(const char* field,
                                                              float fallback) const {
  if (!Has(field)) return fallback;
  const Json& value = json_.at(field);
  if (!value.is_number()) {
    return std::unexpected(path_ + ": field \"" + field + "\" must be a number, got " +
                           value.dump());
  }
  return value.get<float>();
}

std::expected<bool, std::string> ConfigFields::OptionalBool(const char* field,
                                                            bool fallback) const {
  if (!Has(field)) return fallback;
  const Json& value = json_.at(field);
  if (!value.is_boolean()) {
    return std::unexpected(path_ + ": field \"" + field + "\" must be true or false");
  }
  return value.get<bool>();
}

std::expected<std::string, std::string> ConfigFields::OptionalString(
    const char* field, const std::string& fallback) const {
  if (!Has(field)) return fallback;
  const Json& value = json_.at(field);
  if (!value.is_string()) {
    return std::unexpected(path_ + ": field \"" + field + "\" must be a string");
  }
  return value.get<std::string>();
}

std::expected<std::vector<int>, std::string> ConfigFields::OptionalIndexList(const char* field,
                                                                             int end) const {
  std::vector<int> indices;
  if (!Has(field)) return indices;
  const Json& value = json_.at(field);
  if (!value.is_array()) {
    return std::unexpected(path_ + ": field \"" + field + "\" must be a list of integers, got " +
                           value.dump());
  }
  for (const Json& entry : value) {
    if (!entry.is_number_integer() || entry.get<int64_t>() < 0 || entry.get<int64_t>() >= end) {
      return std::unexpected(path_ + ": field \"" + field + "\" holds " + entry.dump() +
                             "; every entry must be an integer in [0, " + std::to_string(end) +
                             ")");
    }
    indices.push_back(entry.get<int>());
  }
  return indices;
}

std::expected<void, std::string> ConfigFields::RefuseUnless(const char* field,
                                                            bool implemented) const {
  auto value = OptionalBool(field, implemented);
  if (!value) return std::unexpected(value.error());
  if (*value != implemented) {
    return std::unexpected(path_ + ": " + field + " " + (*value ? "true" : "false") +
                           " is not supported (actex implements " +
                           (implemented ? "true" : "false") + ")");
  }
  return {};
}

std::expected<void, std::string> ConfigFields::RefuseIfSet(const char* field,
                                                           const std::string& why) const {
  if (!Has(field)) return {};
  return std::unexpected(path_ + ": " + field + " " + json_.at(field).dump() +
                         " is not supported: " + why);
}

std::expected<void, std::string> ConfigFields::RequireOneOf(
    const char* field, const std::string& fallback,
    std::initializer_list<const char*> implemented) const {
  auto value = OptionalString(field, fallback);
  if (!value) return std::unexpected(value.error());
  std::string list;
  for (const char* name : implemented) {
    if (*value == name) return {};
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  return std::unexpected(path_ + ": " + field + " \"" + *value +
                         "\" is not supported; actex implements " + list);
}

std::expected<RopeConfig, std::string> ConfigFields::Rope() const {
  RopeConfig rope;
  // Newer configs carry everything in rope_parameters; older ones rope_theta and
  // rope_scaling.
  const char* object_field = Has("rope_scaling") ? "rope_scaling" : "rope_parameters";
  auto theta = OptionalFloat("rope_theta", 10000.0f);
  if (!theta) return std::unexpected(theta.error());
  rope.theta = *theta;
  if (!(rope.theta > 0.0f)) return std::unexpected(path_ + ": rope_theta must be positive");
  if (!Has(object_field)) return rope;
  const Json& object = json_.at(object_field);
  if (!object.is_object()) {
    return std::unexpected(path_ + ": field \"" + object_field + "\" must be an object or null");
  }
  ConfigFields inner(object, path_ + " " + object_field);
  if (inner.Has("rope_theta")) {
    auto inner_theta = inner.OptionalFloat("rope_theta", rope.theta);
    if (!inner_theta) return std::unexpected(inner_theta.error());
    rope.theta = *inner_theta;
  }
  auto type = inner.OptionalString("rope_type", "");
  if (!type) return std::unexpected(type.error());
  if (type->empty()) {  // older files say "type"
    type = inner.OptionalString("type", "default");
    if (!type) return std::unexpected(type.error());
  }
  if (*type == "default") return rope;
  if (*type != "linear" && *type != "llama3") {
    return std::unexpected(path_ + ": " + object_field + ".rope_type \"" + *type +
                           "\" is not supported; actex implements default, linear and llama3");
  }
  auto factor = inner.RequiredFloat("factor");
  if (!factor) return std::unexpected(factor.error());
  if (!(*factor > 0.0f)) return std::unexpected(path_ + ": rope factor must be positive");
  rope.factor = *factor;
  rope.scaling = *type == "linear" ? RopeScaling::kLinear : RopeScaling::kLlama3;
  if (rope.scaling == RopeScaling::kLlama3) {
    auto low = inner.RequiredFloat("low_freq_factor");
    if (!low) return std::unexpected(low.error());
    auto high = inner.RequiredFloat("high_freq_factor");
    if (!high) return std::unexpected(high.error());
    auto original = inner.RequiredInt("original_max_position_embeddings");
    if (!original) return std::unexpected(original.error());
    if (!(*high > *low)) {
      return std::unexpected(path_ + ": " + object_field +
                             " high_freq_factor must exceed low_freq_factor");
    }
    rope.low_freq_factor = *low;
    rope.high_freq_factor = *high;
    rope.original_max_positions = static_cast<float>(*original);
  }
  if (!(rope.theta > 0.0f)) return std::unexpected(path_ + ": rope_theta must be positive");
  return rope;
}

}  // namespace actex
