#ifndef ACTEX_TESTS_FUZZ_FUZZ_UTF8_H_
#define ACTEX_TESTS_FUZZ_FUZZ_UTF8_H_

#include <cstdint>
#include <string_view>

namespace actex {

// RFC 3629 well-formedness, written from the RFC's table independently of the
// validators under test, so the harnesses can judge them: no overlong forms, no
// surrogates, nothing above U+10FFFF, no truncated sequence.
inline bool IsWellFormedUtf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  size_t i = 0;
  while (i < size) {
    const uint8_t lead = bytes[i];
    size_t length = 0;
    uint8_t low = 0x80, high = 0xBF;  // allowed range of the second byte
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // overlong
      if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // overlong
      if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
    } else {
      return false;
    }
    if (size - i < length) return false;
    if (bytes[i + 1] < low || bytes[i + 1] > high) return false;
    for (size_t k = 2; k < length; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace actex

#endif  // ACTEX_TESTS_FUZZ_FUZZ_UTF8_H_
