#ifndef ACTEX_MODEL_TOKENIZER_JSON_MEMBERS_H_
#define ACTEX_MODEL_TOKENIZER_JSON_MEMBERS_H_

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>

namespace actex {

// Reading members of a tokenizer.json with messages that name the member's path
// ("pre_tokenizer.pretokenizers[1].type must be ..."), so a refusal says where.

// "field[index]".
std::string Indexed(const std::string& field, size_t index);

// The "type" string of a component object.
std::expected<std::string, std::string> TypeOf(const nlohmann::json& component,
                                               const std::string& field);

// A boolean member that defaults when absent or null.
std::expected<bool, std::string> BoolMember(const nlohmann::json& object, const char* name,
                                            const std::string& field, bool fallback);

// A token id: an integer from 0 to 2^31-1.
std::expected<int32_t, std::string> TokenId(const nlohmann::json& value, const std::string& field);

// A string member that must be present.
std::expected<std::string, std::string> StringMember(const nlohmann::json& object, const char* name,
                                                     const std::string& field);

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_JSON_MEMBERS_H_
