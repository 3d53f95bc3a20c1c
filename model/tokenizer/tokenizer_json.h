#ifndef ACTEX_MODEL_TOKENIZER_TOKENIZER_JSON_H_
#define ACTEX_MODEL_TOKENIZER_TOKENIZER_JSON_H_

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/tokenizer/added_tokens.h"
#include "model/tokenizer/byte_level_bpe.h"
#include "model/tokenizer/pretokenizer.h"
#include "model/tokenizer/text_normalizer.h"

namespace actex {

// What a HuggingFace tokenizer.json says about encoding, for BPE models: byte-level
// (Qwen, GPT-2, Llama 3) or over characters with byte fallback (Gemma). Decoder, post-processor,
// truncation and padding are not read: actex adds no special tokens and never truncates.
struct TokenizerJsonSpec {
  std::vector<NormalizerStep> normalization;  // "normalizer", flattened
  // The Split pre-tokenizers, in order, including the GPT-2 pattern when the
  // ByteLevel pre-tokenizer has use_regex=true.
  std::vector<SplitRule> split_rules;
  std::vector<AddedToken> raw_added_tokens;                 // "normalized": false
  std::vector<AddedToken> normalized_added_tokens;          // "normalized": true
  BpeVocabulary vocab;                                      // "model.vocab"
  std::vector<std::pair<std::string, std::string>> merges;  // "model.merges", rank order
  BpeOptions bpe_options;
};

// Parses the text of a tokenizer.json. Anything that would change the ids and that
// is not implemented (another model type, normalizer or pre-tokenizer, lstrip on an
// added token, ...) is refused with a message naming the JSON field, rather than
// tokenizing differently from the model's own tokenizer. Messages do not name the
// file; the caller adds it.
std::expected<TokenizerJsonSpec, std::string> ParseTokenizerJson(std::string_view json_text);

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_TOKENIZER_JSON_H_
