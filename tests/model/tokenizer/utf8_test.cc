#include "model/tokenizer/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace actex {
namespace {

using namespace std::string_literals;

TEST(FirstInvalidUtf8Byte, AcceptsWellFormedTextOfEveryLength) {
  EXPECT_EQ(FirstInvalidUtf8Byte(""), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte("plain ascii, long enough for the 8-byte path"), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte("caf\xC3\xA9 \xE6\x9D\xB1 \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"),
            std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte("nul \0 inside"s), std::nullopt);
}

TEST(FirstInvalidUtf8Byte, ReportsTheOffsetOfTheFirstBadByte) {
  EXPECT_EQ(FirstInvalidUtf8Byte("abc\xFF"), 3u);
  EXPECT_EQ(FirstInvalidUtf8Byte("0123456789abcdefghij\x80tail"), 20u);
  EXPECT_EQ(FirstInvalidUtf8Byte("\xC3\xA9\xC3"), 2u);  // truncated sequence at the end
}

TEST(FirstInvalidUtf8Byte, RejectsOverlongFormsSurrogatesAndOutOfRangeCodePoints) {
  EXPECT_EQ(FirstInvalidUtf8Byte("\xC0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(FirstInvalidUtf8Byte("\xE0\x80\xAF"), 0u);      // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8Byte("\xF0\x80\x80\xAF"), 0u);  // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8Byte("\xED\xA0\x80"), 0u);      // surrogate U+D800
  EXPECT_EQ(FirstInvalidUtf8Byte("\xF4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(FirstInvalidUtf8Byte("\xE6\x9D"), 0u);          // missing continuation
  EXPECT_EQ(FirstInvalidUtf8Byte("\xE6\x41\xB1"), 0u);      // ASCII where continuation belongs
}

TEST(AppendUtf8CodePoint, EncodesEachLengthClass) {
  std::string out;
  AppendUtf8CodePoint(U'A', &out);
  AppendUtf8CodePoint(U'\u0120', &out);
  AppendUtf8CodePoint(U'\u6771', &out);
  AppendUtf8CodePoint(U'\U0001F600', &out);
  EXPECT_EQ(out, "A\xC4\xA0\xE6\x9D\xB1\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace actex
