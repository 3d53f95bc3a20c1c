#include "model/tokenizer/pretokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace actex {
namespace {

// The Split regex exactly as the Qwen2-layout fixture ships it.
std::string Qwen2SplitPattern() {
  std::ifstream in(std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/bpe-qwen2-style/tokenizer.json");
  std::stringstream contents;
  contents << in.rdbuf();
  const nlohmann::json root = nlohmann::json::parse(contents.str());
  return root.at("pre_tokenizer").at("pretokenizers").at(0).at("pattern").at("Regex");
}

std::vector<std::string> Pieces(const RegexSplitter& splitter, std::string_view text) {
  std::vector<std::string_view> views;
  auto status = splitter.Split(text, &views);
  EXPECT_TRUE(status.has_value()) << status.error();
  return std::vector<std::string>(views.begin(), views.end());
}

using Strings = std::vector<std::string>;

class Qwen2Split : public testing::Test {
 protected:
  void SetUp() override {
    auto created = RegexSplitter::Create({Qwen2SplitPattern()});
    ASSERT_TRUE(created.has_value()) << created.error();
    splitter_.emplace(std::move(*created));
  }
  Strings Split(std::string_view text) { return Pieces(*splitter_, text); }

  std::optional<RegexSplitter> splitter_;
};

TEST_F(Qwen2Split, EveryDigitIsItsOwnPiece) {
  EXPECT_EQ(Split("x1y22z333"), (Strings{"x", "1", "y", "2", "2", "z", "3", "3", "3"}));
  EXPECT_EQ(Split("pi 3.14"), (Strings{"pi", " ", "3", ".", "1", "4"}));
}

TEST_F(Qwen2Split, LastSpaceOfARunJoinsTheFollowingWord) {
  EXPECT_EQ(Split("a   b"), (Strings{"a", "  ", " b"}));
  EXPECT_EQ(Split("   hello"), (Strings{"  ", " hello"}));
}

TEST_F(Qwen2Split, TrailingWhitespaceStaysOnePiece) {
  EXPECT_EQ(Split("hello   "), (Strings{"hello", "   "}));
  EXPECT_EQ(Split("a\t\tb"), (Strings{"a", "\t", "\tb"}));
}

TEST_F(Qwen2Split, LineBreaksGroupWithPrecedingWhitespace) {
  EXPECT_EQ(Split("a\r\n\r\nb"), (Strings{"a", "\r\n\r\n", "b"}));
  EXPECT_EQ(Split("end.\n  next"), (Strings{"end", ".\n", " ", " next"}));
}

TEST_F(Qwen2Split, ContractionsMatchInAnyCase) {
  EXPECT_EQ(Split("IT'S we'Re they'lL"), (Strings{"IT", "'S", " we", "'Re", " they", "'lL"}));
}

TEST_F(Qwen2Split, PunctuationPrefixJoinsALetterRun) {
  EXPECT_EQ(Split("(hello) world!!"), (Strings{"(hello", ")", " world", "!!"}));
}

// Oniguruma's \s is Unicode White_Space: U+0085 (NEXT LINE) is whitespace, so the
// run splits like spaces and the last one joins the word.
TEST_F(Qwen2Split, NextLineCharacterIsWhitespace) {
  EXPECT_EQ(Split("a\u0085\u0085b"), (Strings{"a", "\u0085", "\u0085b"}));
}

// U+FEFF and U+180E are not White_Space (PCRE2's own \s would take U+180E), so
// they group like punctuation.
TEST_F(Qwen2Split, ByteOrderMarkAndMongolianVowelSeparatorAreNotWhitespace) {
  EXPECT_EQ(Split("a\uFEFF\uFEFFb"), (Strings{"a", "\uFEFF\uFEFF", "b"}));
  EXPECT_EQ(Split("a\u180E\u180Eb"), (Strings{"a", "\u180E\u180E", "b"}));
}

TEST_F(Qwen2Split, PiecesCoverTheTextExactly) {
  const std::string text = "Hello, \u4e16\u754c! 42 \u00e9t\u00e9\n\n  ok";
  std::string joined;
  for (const std::string& piece : Split(text)) joined += piece;
  EXPECT_EQ(joined, text);
}

TEST(TranslateOnigurumaPattern, RewritesWhitespaceClassesInsideAndOutsideBrackets) {
  EXPECT_EQ(TranslateOnigurumaPattern(R"(\s+(?!\S))"), R"(\p{White_Space}+(?!\P{White_Space}))");
  EXPECT_EQ(TranslateOnigurumaPattern(R"([^\s\p{L}])"), R"([^\p{White_Space}\p{L}])");
}

TEST(TranslateOnigurumaPattern, LeavesEscapedBackslashesAndQuotedTextAlone) {
  EXPECT_EQ(TranslateOnigurumaPattern(R"(\\s)"), R"(\\s)");
  EXPECT_EQ(TranslateOnigurumaPattern(R"(\Q\s\E\s)"), R"(\Q\s\E\p{White_Space})");
  EXPECT_EQ(TranslateOnigurumaPattern(R"(\p{N}\d)"), R"(\p{N}\d)");
}

TEST(RegexSplitter, KeepsMatchesAndTheTextBetweenThemAsSeparatePieces) {
  auto splitter = RegexSplitter::Create({"-+"});
  ASSERT_TRUE(splitter.has_value()) << splitter.error();
  EXPECT_EQ(Pieces(*splitter, "a--b-c-"), (Strings{"a", "--", "b", "-", "c", "-"}));
}

TEST(RegexSplitter, EmptyMatchesOnlyMarkBoundaries) {
  auto splitter = RegexSplitter::Create({"x*"});
  ASSERT_TRUE(splitter.has_value()) << splitter.error();
  EXPECT_EQ(Pieces(*splitter, "axxb\u00e9"), (Strings{"a", "xx", "b", "\u00e9"}));
}

TEST(RegexSplitter, InvalidPatternIsAnErrorQuotingIt) {
  auto splitter = RegexSplitter::Create({"(unclosed"});
  ASSERT_FALSE(splitter.has_value());
  EXPECT_NE(splitter.error().find("(unclosed"), std::string::npos) << splitter.error();
}

TEST(PreTokenizer, AppliesSplittersInSequence) {
  std::vector<RegexSplitter> splitters;
  for (const char* pattern : {" ", "\\p{N}"}) {
    auto splitter = RegexSplitter::Create({pattern});
    ASSERT_TRUE(splitter.has_value()) << splitter.error();
    splitters.push_back(std::move(*splitter));
  }
  const PreTokenizer pre_tokenizer(std::move(splitters));
  std::vector<std::string_view> pieces;
  ASSERT_TRUE(pre_tokenizer.Split("ab12 c", &pieces).has_value());
  EXPECT_EQ(Strings(pieces.begin(), pieces.end()), (Strings{"ab", "1", "2", " ", "c"}));
  ASSERT_TRUE(pre_tokenizer.Split("", &pieces).has_value());
  EXPECT_TRUE(pieces.empty());
}

}  // namespace
}  // namespace actex
