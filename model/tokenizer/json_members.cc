#include "model/tokenizer/json_members.h"

#include <limits>

namespace actex {

using Json = nlohmann::json;

std::string Indexed(const std::string& field, size_t index) {
  return field + "[" + std::to_string(index) + "]";
}

std::expected<std::string, std::string> TypeOf(const Json& component, const std::string& field) {
  if (!component.is_object()) return std::unexpected(field + " must be an object or null");
  const auto type = component.find("type");
  if (type == component.end() || !type->is_string()) {
    return std::unexpected(field + ".type is missing or not a string");
  }
  return type->get<std::string>();
}

std::expected<bool, std::string> BoolMember(const Json& object, const char* name,
                                            const std::string& field, bool fallback) {
  const auto member = object.find(name);
  if (member == object.end() || member->is_null()) return fallback;
  if (!member->is_boolean()) return std::unexpected(field + "." + name + " must be true or false");
  return member->get<bool>();
}

std::expected<int32_t, std::string> TokenId(const Json& value, const std::string& field) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
      value.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
    return std::unexpected(field + " must be a token id (an integer from 0 to 2^31-1)");
  }
  return static_cast<int32_t>(value.get<int64_t>());
}

std::expected<std::string, std::string> StringMember(const Json& object, const char* name,
                                                     const std::string& field) {
  const auto member = object.find(name);
  if (member == object.end() || !member->is_string()) {
    return std::unexpected(field + "." + name + " must be a string");
  }
  return member->get<std::string>();
}

}  // namespace actex
