#include "model/tokenizer/text_normalizer.h"

#include <utf8proc.h>

#include <cstdlib>

namespace actex {
namespace {

utf8proc_option_t OptionsFor(NormalizationForm form) {
  // The same option sets utf8proc_NFC() and friends use.
  switch (form) {
    case NormalizationForm::kNfc:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    case NormalizationForm::kNfd:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
    case NormalizationForm::kNfkc:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case NormalizationForm::kNfkd:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  return UTF8PROC_STABLE;
}

// No code point below U+0300 changes under NFC, and none of them composes with
// another one below U+0300 (combining marks start at U+0300), so text whose bytes are
// all below 0xCC (the UTF-8 lead byte of U+0300) is already NFC. Pure ASCII is
// already in every form.
bool IsUnchanged(std::string_view text, NormalizationForm form) {
  const uint8_t limit = form == NormalizationForm::kNfc ? 0xCC : 0x80;
  for (const char c : text) {
    if (static_cast<uint8_t>(c) >= limit) return false;
  }
  return true;
}

// Replaces every occurrence of `pattern` (not empty) in `text`, left to right.
std::string ReplaceAll(std::string_view text, std::string_view pattern, std::string_view content) {
  std::string replaced;
  replaced.reserve(text.size());
  size_t from = 0;
  for (size_t at = text.find(pattern); at != std::string_view::npos;
       at = text.find(pattern, from)) {
    replaced.append(text.substr(from, at - from)).append(content);
    from = at + pattern.size();
  }
  return replaced.append(text.substr(from));
}

}  // namespace

std::expected<void, std::string> TextNormalizer::Normalize(std::string_view text,
                                                           std::string* out) const {
  out->assign(text);
  for (const NormalizerStep& step : steps_) {
    if (step.kind == NormalizerStep::Kind::kReplace) {
      if (out->find(step.pattern) != std::string::npos) {
        *out = ReplaceAll(*out, step.pattern, step.content);
      }
      continue;
    }
    if (step.kind == NormalizerStep::Kind::kPrepend) {
      if (!out->empty()) out->insert(0, step.content);
      continue;
    }
    if (IsUnchanged(*out, step.form)) continue;
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t length =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(out->data()),
                     static_cast<utf8proc_ssize_t>(out->size()), &mapped, OptionsFor(step.form));
    if (length < 0) {
      return std::unexpected(std::string("Unicode normalization failed: ") +
                             utf8proc_errmsg(length));
    }
    out->assign(reinterpret_cast<const char*>(mapped), static_cast<size_t>(length));
    std::free(mapped);
  }
  return {};
}

}  // namespace actex
