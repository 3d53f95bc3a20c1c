#include "model/tokenizer/added_tokens.h"

#include <algorithm>
#include <unordered_set>

namespace actex {

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) {
  std::unordered_set<std::string> seen;
  for (AddedToken& token : tokens) {
    if (token.content.empty() || !seen.insert(token.content).second) continue;
    tokens_.push_back(std::move(token));
  }
  for (uint32_t index = 0; index < tokens_.size(); ++index) {
    by_first_byte_[static_cast<uint8_t>(tokens_[index].content[0])].push_back(index);
  }
  for (std::vector<uint32_t>& bucket : by_first_byte_) {
    std::stable_sort(bucket.begin(), bucket.end(), [this](uint32_t a, uint32_t b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
}

std::optional<AddedTokenMatcher::Match> AddedTokenMatcher::FindNext(std::string_view text,
                                                                    size_t from) const {
  if (tokens_.empty()) return std::nullopt;
  for (size_t pos = from; pos < text.size(); ++pos) {
    const std::vector<uint32_t>& bucket = by_first_byte_[static_cast<uint8_t>(text[pos])];
    for (const uint32_t index : bucket) {
      const std::string& content = tokens_[index].content;
      if (text.substr(pos, content.size()) == content) {
        return Match{pos, pos + content.size(), tokens_[index].id};
      }
    }
  }
  return std::nullopt;
}

}  // namespace actex
