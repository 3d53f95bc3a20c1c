#ifndef ACTEX_MODEL_CONFIG_FIELDS_H_
#define ACTEX_MODEL_CONFIG_FIELDS_H_

#include <expected>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model_config.h"

// In a function returning std::expected<void, std::string>: returns the error of
// `expression` (an expected) when it has one. The family parsers chain field reads with it.
#define ACTEX_TRY(expression) \
  if (auto status = (expression); !status) return std::unexpected(status.error())

namespace actex {

// Typed reads of config.json fields. Every error names the file and the field; a
// field that is absent or null takes the fallback.
class ConfigFields {
 public:
  ConfigFields(const nlohmann::json& json, std::string path)
      : json_(json), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  bool Has(const char* field) const;     // present and not null
  bool IsNull(const char* field) const;  // present and null

  std::expected<int, std::string> RequiredInt(const char* field) const;  // positive
  std::expected<int, std::string> OptionalInt(const char* field, int fallback,
                                              bool allow_zero = false) const;
  std::expected<float, std::string> RequiredFloat(const char* field) const;
  std::expected<float, std::string> OptionalFloat(const char* field, float fallback) const;
  std::expected<bool, std::string> OptionalBool(const char* field, bool fallback) const;
  std::expected<std::string, std::string> OptionalString(const char* field,
                                                         const std::string& fallback) const;
  // A list of integers, each in [0, end) (layer indices, say); absent or null: empty.
  std::expected<std::vector<int>, std::string> OptionalIndexList(const char* field, int end) const;

  // Refuses the field unless it is absent, null or equal to `implemented`.
  std::expected<void, std::string> RefuseUnless(const char* field, bool implemented) const;
  // Refuses the field unless it is absent or null; `why` says what actex does instead.
  std::expected<void, std::string> RefuseIfSet(const char* field, const std::string& why) const;
  // The string field (or `fallback`) must be one of `implemented`.
  std::expected<void, std::string> RequireOneOf(
      const char* field, const std::string& fallback,
      std::initializer_list<const char*> implemented) const;
  // rope_theta with rope_scaling, or the newer rope_parameters: default, linear, llama3.
  std::expected<RopeConfig, std::string> Rope() const;

 private:
  const nlohmann::json& json_;
  std::string path_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_CONFIG_FIELDS_H_
