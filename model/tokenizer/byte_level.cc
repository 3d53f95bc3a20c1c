#include "model/tokenizer/byte_level.h"

#include "base/utf8.h"

namespace actex {
namespace {

bool MapsToItself(uint8_t byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
}

}  // namespace

char32_t ByteLevelCodePoint(uint8_t byte) {
  if (MapsToItself(byte)) return byte;
  // Count the bytes below `byte` that do not map to themselves: they took the
  // code points U+0100 onwards before it.
  char32_t shifted = 0;
  for (int lower = 0; lower < byte; ++lower) {
    if (!MapsToItself(static_cast<uint8_t>(lower))) ++shifted;
  }
  return 0x100 + shifted;
}

std::array<std::string, 256> ByteLevelSymbols() {
  std::array<std::string, 256> symbols;
  for (int byte = 0; byte < 256; ++byte) {
    AppendUtf8CodePoint(ByteLevelCodePoint(static_cast<uint8_t>(byte)), &symbols[byte]);
  }
  return symbols;
}

std::string ByteLevelEncode(std::string_view bytes) {
  std::string encoded;
  encoded.reserve(bytes.size() * 2);
  for (const char byte : bytes)
    AppendUtf8CodePoint(ByteLevelCodePoint(static_cast<uint8_t>(byte)), &encoded);
  return encoded;
}

}  // namespace actex
