#ifndef ACTEX_BASE_UTF8_H_
#define ACTEX_BASE_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace actex {

// The 0-based offset of the first byte that does not start a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates U+D800..U+DFFF, nothing
// above U+10FFFF, no truncated sequence), or std::nullopt if all of `text` is valid.
// NUL bytes are valid characters.
std::optional<size_t> FirstInvalidUtf8Byte(std::string_view text);

// The length of the well-formed UTF-8 sequence (as FirstInvalidUtf8Byte judges it)
// that starts at byte `at` of `text`; 0 when none does.
size_t WellFormedUtf8Length(std::string_view text, size_t at);

// The length of the UTF-8 sequence `lead` starts, for text already known to be valid.
inline size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Appends the UTF-8 encoding of `code_point`, which must be a Unicode scalar value.
void AppendUtf8CodePoint(char32_t code_point, std::string* out);

}  // namespace actex

#endif  // ACTEX_BASE_UTF8_H_
