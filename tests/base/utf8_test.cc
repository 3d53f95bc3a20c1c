#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace actex {
namespace {

TEST(FirstInvalidUtf8Byte, AcceptsAsciiAndEveryLengthOfSequence) {
  EXPECT_EQ(FirstInvalidUtf8Byte(""), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte("plain ascii text, longer than eight bytes"), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte("\xC2\x80 \xDF\xBF"), std::nullopt);          // U+0080, U+07FF
  EXPECT_EQ(FirstInvalidUtf8Byte("\xE0\xA0\x80 \xEF\xBF\xBF"), std::nullopt);  // U+0800, U+FFFF
  EXPECT_EQ(FirstInvalidUtf8Byte("\xED\x9F\xBF \xEE\x80\x80"), std::nullopt);  // around surrogates
  EXPECT_EQ(FirstInvalidUtf8Byte("\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF"),
            std::nullopt);  // U+10000..10FFFF
  EXPECT_EQ(
      FirstInvalidUtf8Byte("h\xC3\xA9llo w\xC3\xB6rld \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80"),
      std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte(std::string("nul \0 inside", 12)), std::nullopt);
}

TEST(FirstInvalidUtf8Byte, RejectsOverlongForms) {
  EXPECT_EQ(FirstInvalidUtf8Byte("ab\xC0\x80"), 2u);        // U+0000 in two bytes
  EXPECT_EQ(FirstInvalidUtf8Byte("\xC1\xBF"), 0u);          // U+007F in two bytes
  EXPECT_EQ(FirstInvalidUtf8Byte("\xE0\x9F\xBF"), 0u);      // U+07FF in three bytes
  EXPECT_EQ(FirstInvalidUtf8Byte("\xF0\x8F\xBF\xBF"), 0u);  // U+FFFF in four bytes
}

TEST(FirstInvalidUtf8Byte, RejectsSurrogatesAndCodePointsPastTheRange) {
  EXPECT_EQ(FirstInvalidUtf8Byte("x\xED\xA0\x80"), 1u);     // U+D800
  EXPECT_EQ(FirstInvalidUtf8Byte("x\xED\xBF\xBF"), 1u);     // U+DFFF
  EXPECT_EQ(FirstInvalidUtf8Byte("\xF4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(FirstInvalidUtf8Byte("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(FirstInvalidUtf8Byte("\xFF"), 0u);
}

TEST(FirstInvalidUtf8Byte, RejectsStrayContinuationAndTruncatedSequence) {
  EXPECT_EQ(FirstInvalidUtf8Byte("0123456789\x80"), 10u);
  EXPECT_EQ(FirstInvalidUtf8Byte("abc\xE4\xB8"), 3u);                 // cut at the end
  EXPECT_EQ(FirstInvalidUtf8Byte("abc\xE4\xB8z and more text"), 3u);  // cut in the middle
  EXPECT_EQ(FirstInvalidUtf8Byte("\xF0\x9F\x98"), 0u);
}

TEST(FirstInvalidUtf8Byte, ReportsTheOffsetOfTheFirstBadByte) {
  EXPECT_EQ(FirstInvalidUtf8Byte("abc\xFF"), 3u);
  EXPECT_EQ(FirstInvalidUtf8Byte("0123456789abcdefghij\x80tail"), 20u);
  EXPECT_EQ(FirstInvalidUtf8Byte("\xC3\xA9\xC3"), 2u);  // truncated sequence at the end
}

TEST(AppendUtf8CodePoint, EncodesEachLengthClass) {
  std::string out;
  AppendUtf8CodePoint(U'A', &out);
  AppendUtf8CodePoint(U'\u0120', &out);
  AppendUtf8CodePoint(U'\u6771', &out);
  AppendUtf8CodePoint(U'\U0001F600', &out);
  EXPECT_EQ(out, "A\xC4\xA0\xE6\x9D\xB1\xF0\x9F\x98\x80");
}

TEST(WellFormedUtf8Length, GivesEachSequenceItsLengthAndZeroForWhatIsNotOne) {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xC0\xAF\xED\xA0\x80\xE2\x82";
  EXPECT_EQ(WellFormedUtf8Length(text, 0), 1u);   // a
  EXPECT_EQ(WellFormedUtf8Length(text, 1), 2u);   // é
  EXPECT_EQ(WellFormedUtf8Length(text, 3), 3u);   // €
  EXPECT_EQ(WellFormedUtf8Length(text, 6), 4u);   // 😀
  EXPECT_EQ(WellFormedUtf8Length(text, 10), 0u);  // overlong '/'
  EXPECT_EQ(WellFormedUtf8Length(text, 11), 0u);  // stray continuation byte
  EXPECT_EQ(WellFormedUtf8Length(text, 12), 0u);  // a surrogate
  EXPECT_EQ(WellFormedUtf8Length(text, 15), 0u);  // cut short by the end
  EXPECT_EQ(WellFormedUtf8Length(text, text.size()), 0u);
  EXPECT_EQ(WellFormedUtf8Length(std::string("\0", 1), 0), 1u);
}

}  // namespace
}  // namespace actex
