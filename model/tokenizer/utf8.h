#ifndef ACTEX_MODEL_TOKENIZER_UTF8_H_
#define ACTEX_MODEL_TOKENIZER_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace actex {

// Returns the byte offset of the first byte that does not start a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or
// nullopt when all of `text` is valid UTF-8. NUL bytes are valid characters.
std::optional<size_t> FirstInvalidUtf8Byte(std::string_view text);

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

#endif  // ACTEX_MODEL_TOKENIZER_UTF8_H_
