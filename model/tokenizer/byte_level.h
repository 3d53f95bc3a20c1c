#ifndef ACTEX_MODEL_TOKENIZER_BYTE_LEVEL_H_
#define ACTEX_MODEL_TOKENIZER_BYTE_LEVEL_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace actex {

// The GPT-2 "bytes_to_unicode" alphabet used by byte-level BPE vocabularies: every
// byte becomes one printable code point, so any byte string is a string of vocabulary
// symbols. Printable Latin-1 bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) map to
// themselves; the other 68 bytes map, in increasing byte order, to U+0100, U+0101, ...
// (so ' ' becomes 'Ġ' U+0120 and '\n' becomes 'Ċ' U+010A).
char32_t ByteLevelCodePoint(uint8_t byte);

// The UTF-8 text of ByteLevelCodePoint for every byte value.
std::array<std::string, 256> ByteLevelSymbols();

// Maps every byte of `bytes` to its symbol and concatenates the UTF-8 results.
std::string ByteLevelEncode(std::string_view bytes);

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_BYTE_LEVEL_H_
