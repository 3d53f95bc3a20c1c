#include "model/tokenizer/added_tokens.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

TEST(AddedTokenMatcher, LeftmostMatchWinsOverALongerLaterOne) {
  const AddedTokenMatcher matcher({{"bcdef", 1}, {"ab", 2}});
  const auto match = matcher.FindNext("xabcdef", 0);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->begin, 1u);
  EXPECT_EQ(match->end, 3u);
  EXPECT_EQ(match->id, 2);
}

TEST(AddedTokenMatcher, LongestMatchWinsAtTheSamePosition) {
  const AddedTokenMatcher matcher({{"<a>", 1}, {"<a><b>", 2}, {"<a><", 3}});
  const auto match = matcher.FindNext("..<a><b>", 0);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->begin, 2u);
  EXPECT_EQ(match->end, 8u);
  EXPECT_EQ(match->id, 2);
}

TEST(AddedTokenMatcher, SearchStartsAtTheGivenOffset) {
  const AddedTokenMatcher matcher({{"<|x|>", 7}});
  const std::string text = "<|x|>a<|x|>";
  const auto first = matcher.FindNext(text, 0);
  ASSERT_TRUE(first.has_value());
  const auto second = matcher.FindNext(text, first->end);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->begin, 6u);
  EXPECT_FALSE(matcher.FindNext(text, second->end).has_value());
}

TEST(AddedTokenMatcher, NearMissesAndCaseVariantsDoNotMatch) {
  const AddedTokenMatcher matcher({{"<|im_start|>", 1}});
  EXPECT_FALSE(matcher.FindNext("<|im_start", 0).has_value());
  EXPECT_FALSE(matcher.FindNext("<|IM_START|>", 0).has_value());
  EXPECT_FALSE(matcher.FindNext("<| im_start|>", 0).has_value());
}

TEST(AddedTokenMatcher, IgnoresEmptyContentAndKeepsTheFirstOfDuplicates) {
  const AddedTokenMatcher matcher({{"", 1}, {"tok", 2}, {"tok", 3}});
  const auto match = matcher.FindNext("a tok", 0);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->id, 2);
  EXPECT_TRUE(AddedTokenMatcher({{"", 1}}).empty());
}

}  // namespace
}  // namespace actex
