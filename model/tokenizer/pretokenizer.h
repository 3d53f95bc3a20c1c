#ifndef ACTEX_MODEL_TOKENIZER_PRETOKENIZER_H_
#define ACTEX_MODEL_TOKENIZER_PRETOKENIZER_H_

#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace actex {

// The split pattern the HuggingFace ByteLevel pre-tokenizer applies when its
// `use_regex` is true (the GPT-2 pattern).
inline constexpr std::string_view kByteLevelSplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Rewrites a pattern written for Oniguruma (the engine HuggingFace tokenizers use) into
// PCRE2 syntax with the same meaning. The two differ on `\s`: Oniguruma's is the
// Unicode White_Space property, while PCRE2's (with UCP) also matches U+180E. `\s` and
// `\S` become `\p{White_Space}` and `\P{White_Space}`, which are valid both inside and
// outside character classes. Escaped backslashes and \Q...\E quotes are left alone.
std::string TranslateOnigurumaPattern(std::string_view pattern);

// What a `Split` pre-tokenizer does with a match: "Isolated" makes every match and every
// stretch of text between matches its own piece; "MergedWithPrevious" appends a match
// to the stretch before it (a match right after another match, or at the start, stays
// alone), as SentencePiece-style files split after each space.
enum class SplitBehavior { kIsolated, kMergedWithPrevious };

struct SplitRule {
  std::string pattern;  // Oniguruma syntax
  SplitBehavior behavior = SplitBehavior::kIsolated;
};

// One HuggingFace `Split` pre-tokenizer. Instances are movable, not copyable, and used
// by one thread at a time.
class RegexSplitter {
 public:
  // Compiles the rule's pattern (translated as above) with PCRE2 in UTF + UCP mode.
  // The error carries PCRE2's message and the offset in the pattern.
  static std::expected<RegexSplitter, std::string> Create(const SplitRule& rule);

  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;
  ~RegexSplitter();

  // Appends the pieces of `text`, in order and covering it exactly, to `pieces`. Empty
  // pieces are dropped; an empty match only marks a boundary. `text` must be valid
  // UTF-8 (it is not checked again). Fails only if PCRE2 reports a matching error
  // such as a resource limit.
  std::expected<void, std::string> Split(std::string_view text,
                                         std::vector<std::string_view>* pieces) const;

 private:
  struct Compiled;
  RegexSplitter(std::unique_ptr<Compiled> compiled, SplitBehavior behavior);
  std::unique_ptr<Compiled> compiled_;
  SplitBehavior behavior_ = SplitBehavior::kIsolated;
};

// The pre-tokenizer of a tokenizer.json: a sequence of splitters, each applied to
// every piece the previous one produced.
class PreTokenizer {
 public:
  PreTokenizer() = default;
  explicit PreTokenizer(std::vector<RegexSplitter> splitters) : splitters_(std::move(splitters)) {}

  // Replaces `pieces` with the pieces of `text` (views into `text`).
  std::expected<void, std::string> Split(std::string_view text,
                                         std::vector<std::string_view>* pieces) const;

 private:
  std::vector<RegexSplitter> splitters_;
  mutable std::vector<std::string_view> scratch_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_PRETOKENIZER_H_
