#ifndef ACTEX_MODEL_TOKENIZER_TOKENIZER_H_
#define ACTEX_MODEL_TOKENIZER_TOKENIZER_H_

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace actex {

// Turns UTF-8 text into token ids exactly as the model's own tokenizer does, adding
// no special tokens, and ids back into text. Encode and Decode are const and safe to
// call from one thread at a time per instance; actors own their own instance.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::expected<std::vector<int32_t>, std::string> Encode(std::string_view text) const = 0;
  // The text `ids` stand for, as the model's own tokenizer decodes them keeping special
  // tokens: Decode(Encode(t)) is t once normalized. Ids that cut a character in two give
  // its partial bytes (not valid UTF-8). Fails naming an id outside the vocabulary.
  virtual std::expected<std::string, std::string> Decode(std::span<const int32_t> ids) const = 0;
  // sha256 hex of the tokenizer file, recorded in every output shard.
  virtual const std::string& file_hash() const = 0;
  virtual const std::string& file_path() const = 0;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_TOKENIZER_H_
