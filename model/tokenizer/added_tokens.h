#ifndef ACTEX_MODEL_TOKENIZER_ADDED_TOKENS_H_
#define ACTEX_MODEL_TOKENIZER_ADDED_TOKENS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace actex {

struct AddedToken {
  std::string content;  // non-empty
  int32_t id = 0;
};

// Finds added tokens (such as "<|im_start|>") written literally in text, the way
// HuggingFace's added vocabulary does with split_special_tokens=false: the leftmost
// match wins, and among matches starting at the same byte the longest wins.
class AddedTokenMatcher {
 public:
  struct Match {
    size_t begin = 0;
    size_t end = 0;
    int32_t id = 0;
  };

  AddedTokenMatcher() = default;
  // Tokens with empty content are ignored; if two share a content the first is kept.
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  bool empty() const { return tokens_.empty(); }

  // The leftmost-longest match starting at or after byte `from`, if any.
  std::optional<Match> FindNext(std::string_view text, size_t from) const;

 private:
  std::vector<AddedToken> tokens_;
  // Indexes into tokens_ by first byte, longest content first.
  std::array<std::vector<uint32_t>, 256> by_first_byte_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_ADDED_TOKENS_H_
