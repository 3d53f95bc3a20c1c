// Every reference case of the three tokenizer fixtures must encode to exactly the
// oracle's ids, and those ids decode to exactly the oracle's text (see
// tests/fixtures/tokenizers/README.md for how they were produced).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer/tokenizer_folder.h"
#include "tests/model/tokenizer/tokenizer_cases.h"

namespace actex {
namespace {

struct FixtureCase {
  std::string text;
  std::vector<int32_t> ids;
  std::string decoded;  // the oracle's decode of ids: text once normalized
};

std::string TokenizerFixtureDir(const std::string& folder) {
  return std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/" + folder;
}

std::vector<FixtureCase> ReadFixtureCases(const std::string& folder) {
  std::vector<FixtureCase> cases;
  for (const nlohmann::json& record :
       ReadCaseRecords(TokenizerFixtureDir(folder) + "/cases.jsonl")) {
    cases.push_back({record.at("text").get<std::string>(),
                     record.at("ids").get<std::vector<int32_t>>(),
                     record.at("decoded").get<std::string>()});
  }
  return cases;
}

class FixtureCases : public testing::TestWithParam<std::string> {};

TEST_P(FixtureCases, EveryCaseEncodesToTheOracleIds) {
  const std::vector<FixtureCase> cases = ReadFixtureCases(GetParam());
  ASSERT_EQ(cases.size(), 62u) << "cases.jsonl of " << GetParam();
  auto tokenizer = LoadTokenizer(TokenizerFixtureDir(GetParam()));
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  size_t passing = 0;
  for (size_t index = 0; index < cases.size(); ++index) {
    const FixtureCase& fixture = cases[index];
    auto ids = (*tokenizer)->Encode(fixture.text);
    if (!ids) {
      ADD_FAILURE() << "case " << index << " \"" << fixture.text << "\": " << ids.error();
      continue;
    }
    if (*ids != fixture.ids) {
      ADD_FAILURE() << "case " << index << " \"" << fixture.text << "\"\n  expected "
                    << IdsToString(fixture.ids) << "\n  got      " << IdsToString(*ids);
      continue;
    }
    ++passing;
  }
  EXPECT_EQ(passing, cases.size()) << GetParam() << ": " << passing << "/" << cases.size();
}

// Encoding a case a second time goes through the piece cache and must not change ids.
TEST_P(FixtureCases, RepeatedEncodingGivesTheSameIds) {
  const std::vector<FixtureCase> cases = ReadFixtureCases(GetParam());
  auto tokenizer = LoadTokenizer(TokenizerFixtureDir(GetParam()));
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  for (int round = 0; round < 2; ++round) {
    for (size_t index = 0; index < cases.size(); ++index) {
      auto ids = (*tokenizer)->Encode(cases[index].text);
      ASSERT_TRUE(ids.has_value()) << ids.error();
      EXPECT_EQ(*ids, cases[index].ids) << "round " << round << ", case " << index;
    }
  }
}

TEST_P(FixtureCases, EveryCaseDecodesToTheOraclesText) {
  const std::vector<FixtureCase> cases = ReadFixtureCases(GetParam());
  auto tokenizer = LoadTokenizer(TokenizerFixtureDir(GetParam()));
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  for (size_t index = 0; index < cases.size(); ++index) {
    auto text = (*tokenizer)->Decode(cases[index].ids);
    ASSERT_TRUE(text.has_value()) << "case " << index << ": " << text.error();
    EXPECT_EQ(*text, cases[index].decoded) << GetParam() << " case " << index;
  }
}

TEST_P(FixtureCases, AnIdOutsideTheVocabularyIsRefusedNamingIt) {
  auto tokenizer = LoadTokenizer(TokenizerFixtureDir(GetParam()));
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  const std::vector<int32_t> ids = {5, 99999};
  auto text = (*tokenizer)->Decode(ids);
  ASSERT_FALSE(text.has_value());
  EXPECT_NE(text.error().find("token id 99999 is not in the vocabulary"), std::string::npos)
      << text.error();
  const std::vector<int32_t> negative = {-1};
  EXPECT_FALSE((*tokenizer)->Decode(negative).has_value());
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, FixtureCases,
                         testing::Values("bpe-qwen2-style", "spm-unigram", "spm-bpe"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace actex
