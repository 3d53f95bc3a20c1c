#include "storage/json_field.h"

namespace actex {

namespace {

constexpr size_t kMaxQuotedChars = 40;

// The member, or nullptr when `object` is not an object or lacks it.
const nlohmann::json* FindMember(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(std::string(key));
  return found == object.end() ? nullptr : &*found;
}

// The error for a member that is missing or of another type; when `object` itself
// is not an object, that is the error.
std::string MemberError(const nlohmann::json& object, const JsonPlace& place, std::string_view key,
                        std::string_view expected) {
  if (!object.is_object()) return JsonTypeError(place, &object, "an object");
  return JsonTypeError(place.Member(key), FindMember(object, key), expected);
}

}  // namespace

JsonPlace JsonPlace::Member(std::string_view key) const {
  return {file, path.empty() ? std::string(key) : path + "." + std::string(key)};
}

JsonPlace JsonPlace::Element(size_t index) const {
  return {file, path + "[" + std::to_string(index) + "]"};
}

std::string JsonPlace::Describe() const {
  if (file.empty()) return path;
  return path.empty() ? file : file + ": " + path;
}

std::string DescribeJson(const nlohmann::json* value) {
  if (value == nullptr) return "missing";
  switch (value->type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return value->get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::string: {
      std::string text = value->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (text.size() > kMaxQuotedChars) text = text.substr(0, kMaxQuotedChars) + "...\"";
      return "a string " + text;
    }
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "the number " + value->dump();
    case nlohmann::json::value_t::array:
      return "an array of " + std::to_string(value->size());
    case nlohmann::json::value_t::object:
      return "an object";
    default:
      return "not a JSON value";
  }
}

std::string JsonTypeError(const JsonPlace& place, const nlohmann::json* value,
                          std::string_view expected) {
  const std::string subject =
      place.path.empty() ? place.file + " holds " : place.Describe() + " is ";
  return subject + DescribeJson(value) + ", expected " + std::string(expected);
}

std::expected<JsonRef, std::string> JsonObjectField(const nlohmann::json& object,
                                                    const JsonPlace& place, std::string_view key) {
  const nlohmann::json* member = FindMember(object, key);
  if (member == nullptr || !member->is_object()) {
    return std::unexpected(MemberError(object, place, key, "an object"));
  }
  return std::cref(*member);
}

std::expected<JsonRef, std::string> JsonArrayField(const nlohmann::json& object,
                                                   const JsonPlace& place, std::string_view key) {
  const nlohmann::json* member = FindMember(object, key);
  if (member == nullptr || !member->is_array()) {
    return std::unexpected(MemberError(object, place, key, "an array"));
  }
  return std::cref(*member);
}

std::expected<std::string, std::string> JsonStringField(const nlohmann::json& object,
                                                        const JsonPlace& place,
                                                        std::string_view key) {
  const nlohmann::json* member = FindMember(object, key);
  if (member == nullptr) return std::unexpected(MemberError(object, place, key, "a string"));
  return JsonString(*member, place.Member(key));
}

std::expected<bool, std::string> JsonBoolField(const nlohmann::json& object, const JsonPlace& place,
                                               std::string_view key) {
  const nlohmann::json* member = FindMember(object, key);
  if (member == nullptr || !member->is_boolean()) {
    return std::unexpected(MemberError(object, place, key, "true or false"));
  }
  return member->get<bool>();
}

std::expected<int64_t, std::string> JsonIntField(const nlohmann::json& object,
                                                 const JsonPlace& place, std::string_view key,
                                                 int64_t minimum) {
  const nlohmann::json* member = FindMember(object, key);
  if (member == nullptr) {
    return std::unexpected(MemberError(object, place, key, "an integer"));
  }
  return JsonInt(*member, place.Member(key), minimum);
}

std::expected<double, std::string> JsonNumberField(const nlohmann::json& object,
                                                   const JsonPlace& place, std::string_view key) {
  const nlohmann::json* member = FindMember(object, key);
  if (member == nullptr) return std::unexpected(MemberError(object, place, key, "a number"));
  return JsonNumber(*member, place.Member(key));
}

std::expected<int64_t, std::string> JsonInt(const nlohmann::json& value, const JsonPlace& place,
                                            int64_t minimum) {
  const std::string expected =
      minimum == INT64_MIN ? "an integer" : "an integer >= " + std::to_string(minimum);
  const bool fits =
      value.is_number_integer() &&
      (!value.is_number_unsigned() || value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX));
  if (!fits || value.get<int64_t>() < minimum) {
    return std::unexpected(JsonTypeError(place, &value, expected));
  }
  return value.get<int64_t>();
}

std::expected<std::string, std::string> JsonString(const nlohmann::json& value,
                                                   const JsonPlace& place) {
  if (!value.is_string()) return std::unexpected(JsonTypeError(place, &value, "a string"));
  return value.get<std::string>();
}

std::expected<double, std::string> JsonNumber(const nlohmann::json& value, const JsonPlace& place) {
  if (!value.is_number()) return std::unexpected(JsonTypeError(place, &value, "a number"));
  return value.get<double>();
}

}  // namespace actex
