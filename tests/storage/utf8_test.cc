#include "storage/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace actex {
namespace {

TEST(FindInvalidUtf8, AcceptsAsciiAndEveryLengthOfSequence) {
  EXPECT_EQ(FindInvalidUtf8(""), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("plain ascii text, longer than eight bytes"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("\xC2\x80 \xDF\xBF"), std::nullopt);          // U+0080, U+07FF
  EXPECT_EQ(FindInvalidUtf8("\xE0\xA0\x80 \xEF\xBF\xBF"), std::nullopt);  // U+0800, U+FFFF
  EXPECT_EQ(FindInvalidUtf8("\xED\x9F\xBF \xEE\x80\x80"), std::nullopt);  // around surrogates
  EXPECT_EQ(FindInvalidUtf8("\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF"), std::nullopt);  // U+10000..10FFFF
  EXPECT_EQ(FindInvalidUtf8("h\xC3\xA9llo w\xC3\xB6rld \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80"),
            std::nullopt);
  EXPECT_EQ(FindInvalidUtf8(std::string("nul \0 inside", 12)), std::nullopt);
}

TEST(FindInvalidUtf8, RejectsOverlongForms) {
  EXPECT_EQ(FindInvalidUtf8("ab\xC0\x80"), 2u);        // U+0000 in two bytes
  EXPECT_EQ(FindInvalidUtf8("\xC1\xBF"), 0u);          // U+007F in two bytes
  EXPECT_EQ(FindInvalidUtf8("\xE0\x9F\xBF"), 0u);      // U+07FF in three bytes
  EXPECT_EQ(FindInvalidUtf8("\xF0\x8F\xBF\xBF"), 0u);  // U+FFFF in four bytes
}

TEST(FindInvalidUtf8, RejectsSurrogatesAndCodePointsPastTheRange) {
  EXPECT_EQ(FindInvalidUtf8("x\xED\xA0\x80"), 1u);     // U+D800
  EXPECT_EQ(FindInvalidUtf8("x\xED\xBF\xBF"), 1u);     // U+DFFF
  EXPECT_EQ(FindInvalidUtf8("\xF4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(FindInvalidUtf8("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(FindInvalidUtf8("\xFF"), 0u);
}

TEST(FindInvalidUtf8, RejectsStrayContinuationAndTruncatedSequence) {
  EXPECT_EQ(FindInvalidUtf8("0123456789\x80"), 10u);
  EXPECT_EQ(FindInvalidUtf8("abc\xE4\xB8"), 3u);                 // cut at the end
  EXPECT_EQ(FindInvalidUtf8("abc\xE4\xB8z and more text"), 3u);  // cut in the middle
  EXPECT_EQ(FindInvalidUtf8("\xF0\x9F\x98"), 0u);
}

}  // namespace
}  // namespace actex
