#ifndef ACTEX_MODEL_TOKENIZER_TOKENIZER_JSON_TEXT_H_
#define ACTEX_MODEL_TOKENIZER_TOKENIZER_JSON_TEXT_H_

#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer/pretokenizer.h"
#include "model/tokenizer/text_normalizer.h"

namespace actex {

// What a tokenizer.json does to text before its model sees it: the "normalizer"
// (Replace, Prepend, NFC, ..., in Sequences) and the "pre_tokenizer" (Split,
// ByteLevel, in Sequences), each flattened into steps. A step that is not
// implemented is refused, naming its field.

// Appends the normalizer's steps (none for null) to `steps`.
std::expected<void, std::string> ParseNormalizer(const nlohmann::json& normalizer,
                                                 const std::string& field,
                                                 std::vector<NormalizerStep>* steps, int depth = 0);

// Flattens the pre-tokenizer into split rules; `byte_level_seen` records the
// ByteLevel step, which must come last.
std::expected<void, std::string> ParsePreTokenizer(const nlohmann::json& pre_tokenizer,
                                                   const std::string& field,
                                                   std::vector<SplitRule>* rules,
                                                   bool* byte_level_seen, int depth = 0);

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_TOKENIZER_JSON_TEXT_H_
