#include "model/tokenizer/utf8.h"

#include <cstdint>

namespace actex {
namespace {

bool IsContinuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

std::optional<size_t> FirstInvalidUtf8Byte(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  size_t pos = 0;
  while (pos < size) {
    // Most corpus text is ASCII: skip it eight bytes at a time.
    while (pos + 8 <= size) {
      uint64_t word;
      __builtin_memcpy(&word, bytes + pos, 8);
      if (word & 0x8080808080808080ull) break;
      pos += 8;
    }
    if (pos >= size) break;
    const uint8_t lead = bytes[pos];
    if (lead < 0x80) {
      ++pos;
      continue;
    }
    // The second byte's allowed range rules out overlong forms, surrogates and
    // code points above U+10FFFF (RFC 3629 section 4).
    size_t length = 0;
    uint8_t second_min = 0x80;
    uint8_t second_max = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) second_min = 0xA0;
      if (lead == 0xED) second_max = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) second_min = 0x90;
      if (lead == 0xF4) second_max = 0x8F;
    } else {
      return pos;
    }
    if (pos + length > size) return pos;
    if (bytes[pos + 1] < second_min || bytes[pos + 1] > second_max) return pos;
    for (size_t i = 2; i < length; ++i) {
      if (!IsContinuation(bytes[pos + i])) return pos;
    }
    pos += length;
  }
  return std::nullopt;
}

void AppendUtf8CodePoint(char32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace actex
