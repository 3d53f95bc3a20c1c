#ifndef ACTEX_STORAGE_JSON_FIELD_H_
#define ACTEX_STORAGE_JSON_FIELD_H_

// Type-checked access to the fields of JSON files actex wrote (metadata.json,
// state.json, ledgers). Such a file may have been edited or damaged since, so
// every reader goes through these instead of nlohmann's value()/get<>()/at(),
// which throw on a wrong type: a damaged field becomes a message naming the file
// and the field, "OUT/host_00/metadata.json: shards[2].bytes is "x" (a string),
// expected an integer >= 0", never an exception.

#include <cstdint>
#include <expected>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace actex {

// Where a JSON value lies: the file, and the path to the value in it ("" for the
// whole document, "shards[2]", "config").
struct JsonPlace {
  std::string file;
  std::string path;

  // The place of member `key` of the object here, and of element `index` of the
  // array here.
  JsonPlace Member(std::string_view key) const;
  JsonPlace Element(size_t index) const;
  // "FILE: PATH" (or "FILE" at the top, or "PATH" without a file: a place inside a
  // file the message names elsewhere).
  std::string Describe() const;
};

// `value` in words for messages: "missing" (a null pointer), "null", "a string
// \"x\"", "the number 5", "true", "an array of 3", "an object".
std::string DescribeJson(const nlohmann::json* value);

// "PLACE is DESCRIPTION, expected WHAT".
std::string JsonTypeError(const JsonPlace& place, const nlohmann::json* value,
                          std::string_view expected);

using JsonRef = std::reference_wrapper<const nlohmann::json>;

// Member `key` of `object` (which must itself be an object, at `place`), of the type
// named. Absent, null or another type is an error naming the field.
std::expected<JsonRef, std::string> JsonObjectField(const nlohmann::json& object,
                                                    const JsonPlace& place, std::string_view key);
std::expected<JsonRef, std::string> JsonArrayField(const nlohmann::json& object,
                                                   const JsonPlace& place, std::string_view key);
std::expected<std::string, std::string> JsonStringField(const nlohmann::json& object,
                                                        const JsonPlace& place,
                                                        std::string_view key);
std::expected<bool, std::string> JsonBoolField(const nlohmann::json& object, const JsonPlace& place,
                                               std::string_view key);
// An integer that fits int64_t and is at least `minimum`.
std::expected<int64_t, std::string> JsonIntField(const nlohmann::json& object,
                                                 const JsonPlace& place, std::string_view key,
                                                 int64_t minimum = INT64_MIN);
// Any finite or non-finite JSON number (integers included).
std::expected<double, std::string> JsonNumberField(const nlohmann::json& object,
                                                   const JsonPlace& place, std::string_view key);

// The same checks on a value itself (an array element), at `place`.
std::expected<int64_t, std::string> JsonInt(const nlohmann::json& value, const JsonPlace& place,
                                            int64_t minimum = INT64_MIN);
std::expected<std::string, std::string> JsonString(const nlohmann::json& value,
                                                   const JsonPlace& place);
std::expected<double, std::string> JsonNumber(const nlohmann::json& value, const JsonPlace& place);

}  // namespace actex

#endif  // ACTEX_STORAGE_JSON_FIELD_H_
