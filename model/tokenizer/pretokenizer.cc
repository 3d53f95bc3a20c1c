#include "model/tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>

#include "base/utf8.h"

namespace actex {
namespace {

// JIT matching keeps its backtracking state on this stack; long pieces (a megabyte
// of whitespace, say) need more than PCRE2's 32 KiB default. Pages are committed on use.
constexpr size_t kJitStackStart = 32 * 1024;
constexpr size_t kJitStackMax = 8 * 1024 * 1024;

std::string Pcre2ErrorMessage(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof(buffer)) < 0) {
    return "PCRE2 error " + std::to_string(code);
  }
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

std::string TranslateOnigurumaPattern(std::string_view pattern) {
  std::string translated;
  translated.reserve(pattern.size() + 32);
  size_t pos = 0;
  while (pos < pattern.size()) {
    const char c = pattern[pos];
    if (c != '\\' || pos + 1 == pattern.size()) {
      translated.push_back(c);
      ++pos;
      continue;
    }
    const char escaped = pattern[pos + 1];
    if (escaped == 'Q') {
      // Quoted literal text runs to \E (or the end); nothing in it is an escape.
      const size_t end = pattern.find("\\E", pos + 2);
      const size_t stop = end == std::string_view::npos ? pattern.size() : end + 2;
      translated.append(pattern.substr(pos, stop - pos));
      pos = stop;
      continue;
    }
    if (escaped == 's') {
      translated.append("\\p{White_Space}");
    } else if (escaped == 'S') {
      translated.append("\\P{White_Space}");
    } else {
      translated.push_back('\\');
      translated.push_back(escaped);
    }
    pos += 2;
  }
  return translated;
}

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_data* match_data = nullptr;
  pcre2_match_context* match_context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;

  ~Compiled() {
    pcre2_match_data_free(match_data);
    pcre2_match_context_free(match_context);
    pcre2_jit_stack_free(jit_stack);
    pcre2_code_free(code);
  }
};

RegexSplitter::RegexSplitter(std::unique_ptr<Compiled> compiled, SplitBehavior behavior)
    : compiled_(std::move(compiled)), behavior_(behavior) {}
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;
RegexSplitter::~RegexSplitter() = default;

std::expected<RegexSplitter, std::string> RegexSplitter::Create(const SplitRule& rule) {
  const std::string& oniguruma_pattern = rule.pattern;
  const std::string pattern = TranslateOnigurumaPattern(oniguruma_pattern);
  auto compiled = std::make_unique<Compiled>();
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C, &error_code,
                                 &error_offset, nullptr);
  if (compiled->code == nullptr) {
    return std::unexpected("cannot compile split pattern \"" + std::string(oniguruma_pattern) +
                           "\" (as PCRE2 \"" + pattern + "\"): " + Pcre2ErrorMessage(error_code) +
                           " at offset " + std::to_string(error_offset));
  }
  // JIT is an optimisation only: without it pcre2_match interprets the same pattern.
  const bool jit_ok = pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE) == 0;
  compiled->match_data = pcre2_match_data_create_from_pattern(compiled->code, nullptr);
  compiled->match_context = pcre2_match_context_create(nullptr);
  if (compiled->match_data == nullptr || compiled->match_context == nullptr) {
    return std::unexpected("out of memory compiling split pattern");
  }
  if (jit_ok) {
    compiled->jit_stack = pcre2_jit_stack_create(kJitStackStart, kJitStackMax, nullptr);
    if (compiled->jit_stack == nullptr) return std::unexpected("out of memory for PCRE2 JIT stack");
    pcre2_jit_stack_assign(compiled->match_context, nullptr, compiled->jit_stack);
  }
  return RegexSplitter(std::move(compiled), rule.behavior);
}

std::expected<void, std::string> RegexSplitter::Split(std::string_view text,
                                                      std::vector<std::string_view>* pieces) const {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t piece_start = 0;
  size_t search_from = 0;
  while (search_from < text.size()) {
    const int result =
        pcre2_match(compiled_->code, subject, text.size(), search_from, PCRE2_NO_UTF_CHECK,
                    compiled_->match_data, compiled_->match_context);
    if (result == PCRE2_ERROR_NOMATCH) break;
    if (result < 0) {
      return std::unexpected("split pattern matching failed: " + Pcre2ErrorMessage(result));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(compiled_->match_data);
    const size_t begin = ovector[0];
    const size_t end = ovector[1];
    if (behavior_ == SplitBehavior::kMergedWithPrevious && end > begin && begin > piece_start) {
      pieces->push_back(text.substr(piece_start, end - piece_start));  // stretch + match
      piece_start = search_from = end;
      continue;
    }
    if (begin > piece_start) pieces->push_back(text.substr(piece_start, begin - piece_start));
    piece_start = end;
    if (end > begin) {
      pieces->push_back(text.substr(begin, end - begin));
      search_from = end;
    } else {
      // An empty match splits here but yields no piece; like Oniguruma's iterator,
      // look for the next match one character further on.
      if (begin >= text.size()) break;
      search_from = begin + Utf8Length(static_cast<uint8_t>(text[begin]));
    }
  }
  if (piece_start < text.size()) pieces->push_back(text.substr(piece_start));
  return {};
}

std::expected<void, std::string> PreTokenizer::Split(std::string_view text,
                                                     std::vector<std::string_view>* pieces) const {
  pieces->clear();
  if (text.empty()) return {};
  pieces->push_back(text);
  for (const RegexSplitter& splitter : splitters_) {
    scratch_.clear();
    for (const std::string_view piece : *pieces) {
      if (auto split = splitter.Split(piece, &scratch_); !split) return split;
    }
    pieces->swap(scratch_);
  }
  return {};
}

}  // namespace actex
