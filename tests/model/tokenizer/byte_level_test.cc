#include "model/tokenizer/byte_level.h"

#include <gtest/gtest.h>

#include <set>

namespace actex {
namespace {

TEST(ByteLevel, PrintableLatin1BytesMapToThemselves) {
  for (const int byte : {0x21, 0x41, 0x7E, 0xA1, 0xAC, 0xAE, 0xFF}) {
    EXPECT_EQ(ByteLevelCodePoint(static_cast<uint8_t>(byte)), static_cast<char32_t>(byte)) << byte;
  }
}

TEST(ByteLevel, OtherBytesTakeCodePointsFromU0100InByteOrder) {
  EXPECT_EQ(ByteLevelCodePoint(0x00), U'\u0100');
  EXPECT_EQ(ByteLevelCodePoint('\n'), U'\u010A');  // 'Ċ'
  EXPECT_EQ(ByteLevelCodePoint(' '), U'\u0120');   // 'Ġ'
  EXPECT_EQ(ByteLevelCodePoint(0x7F), U'\u0121');
  EXPECT_EQ(ByteLevelCodePoint(0x80), U'\u0122');
  EXPECT_EQ(ByteLevelCodePoint(0xA0), U'\u0142');
  EXPECT_EQ(ByteLevelCodePoint(0xAD), U'\u0143');  // the last one
}

TEST(ByteLevel, MappingIsOneToOne) {
  std::set<char32_t> seen;
  for (int byte = 0; byte < 256; ++byte)
    seen.insert(ByteLevelCodePoint(static_cast<uint8_t>(byte)));
  EXPECT_EQ(seen.size(), 256u);
  const auto symbols = ByteLevelSymbols();
  EXPECT_EQ(std::set<std::string>(symbols.begin(), symbols.end()).size(), 256u);
}

TEST(ByteLevel, EncodesEveryByteOfAString) {
  EXPECT_EQ(ByteLevelEncode("Hi there\n"), "Hi\xC4\xA0there\xC4\x8A");
  // 'é' is two bytes, C3 A9, each mapping to itself as a Latin-1 code point.
  EXPECT_EQ(ByteLevelEncode("\xC3\xA9"), "\xC3\x83\xC2\xA9");
}

}  // namespace
}  // namespace actex
