#include "base/utf8.h"

#include <cstdint>
#include <cstring>

namespace actex {

namespace {

bool IsContinuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

// Length of the well-formed sequence starting at `at`, 0 if it is not one.
// The bounds on the second byte follow RFC 3629's table: they are what excludes
// overlong forms (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
size_t SequenceLength(const uint8_t* at, size_t available) {
  const uint8_t lead = at[0];
  size_t length = 0;
  uint8_t second_min = 0x80, second_max = 0xBF;
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
    return 0;  // 0x80..0xC1 (continuation or overlong 2-byte lead) and 0xF5..0xFF
  }
  if (available < length) return 0;
  if (at[1] < second_min || at[1] > second_max) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (!IsContinuation(at[i])) return 0;
  }
  return length;
}

}  // namespace

size_t WellFormedUtf8Length(std::string_view text, size_t at) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  if (at >= text.size()) return 0;
  if (bytes[at] < 0x80) return 1;
  return SequenceLength(bytes + at, text.size() - at);
}

std::optional<size_t> FirstInvalidUtf8Byte(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  size_t i = 0;
  while (i < size) {
    // Corpus text is mostly ASCII: skip it eight bytes at a time.
    if (i + 8 <= size) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    if (bytes[i] < 0x80) {
      ++i;
      continue;
    }
    size_t length = SequenceLength(bytes + i, size - i);
    if (length == 0) return i;
    i += length;
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
