// The tokenizer.json files Llama 3, Gemma 3 and Qwen3 ship (pruned to what the test
// texts use, see tests/fixtures/real-tokenizers/README.md) must give exactly the ids
// HF's Rust `tokenizers` gives, without and with the special tokens HF adds, and those
// ids must decode back to the text.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer/post_processor.h"
#include "model/tokenizer/text_normalizer.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "tests/model/tokenizer/tokenizer_cases.h"

namespace actex {
namespace {

struct RealCase {
  std::string text;
  std::vector<int32_t> ids;               // tokenizer.encode(text, add_special_tokens=False)
  std::vector<int32_t> ids_with_special;  // tokenizer(text): what HF feeds the model
};

std::string RealTokenizerDir(const std::string& family) {
  return std::string(ACTEX_FIXTURES_DIR) + "/real-tokenizers/" + family;
}

std::vector<RealCase> ReadRealCases(const std::string& family) {
  std::vector<RealCase> cases;
  for (const nlohmann::json& record : ReadCaseRecords(RealTokenizerDir(family) + "/cases.jsonl")) {
    cases.push_back({record.at("text").get<std::string>(),
                     record.at("ids").get<std::vector<int32_t>>(),
                     record.at("ids_with_special").get<std::vector<int32_t>>()});
  }
  return cases;
}

class RealTokenizers : public testing::TestWithParam<std::string> {};

TEST_P(RealTokenizers, EveryTextEncodesToTheIdsOfHfsRustTokenizer) {
  const std::vector<RealCase> cases = ReadRealCases(GetParam());
  ASSERT_EQ(cases.size(), 102u) << "cases.jsonl of " << GetParam();
  auto tokenizer = LoadTokenizer(RealTokenizerDir(GetParam()));
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  size_t passing = 0;
  for (size_t index = 0; index < cases.size(); ++index) {
    auto ids = (*tokenizer)->Encode(cases[index].text);
    ASSERT_TRUE(ids.has_value()) << "case " << index << ": " << ids.error();
    if (*ids == cases[index].ids) {
      ++passing;
      continue;
    }
    ADD_FAILURE() << GetParam() << " case " << index << " \"" << cases[index].text
                  << "\"\n  expected " << IdsToString(cases[index].ids) << "\n  got      "
                  << IdsToString(*ids);
  }
  EXPECT_EQ(passing, cases.size()) << GetParam();
}

// Decoding gives each text back byte for byte, once normalized as the family's
// tokenizer normalizes it: Qwen3's NFC (the NFD cases come back composed); Gemma's
// " " -> "▁" is undone by the decoder and Llama 3 has no normalizer.
TEST_P(RealTokenizers, EveryCasesIdsDecodeToItsNormalizedText) {
  const std::vector<RealCase> cases = ReadRealCases(GetParam());
  auto tokenizer = LoadTokenizer(RealTokenizerDir(GetParam()));
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  const TextNormalizer nfc({NormalizerStep::Form(NormalizationForm::kNfc)});
  for (size_t index = 0; index < cases.size(); ++index) {
    std::string expected = cases[index].text;
    if (GetParam() == "qwen3") {
      ASSERT_TRUE(nfc.Normalize(cases[index].text, &expected));
    }
    auto text = (*tokenizer)->Decode(cases[index].ids);
    ASSERT_TRUE(text.has_value()) << "case " << index << ": " << text.error();
    EXPECT_EQ(*text, expected) << GetParam() << " case " << index;
  }
}

// --bos auto prepends what the post-processor adds; HF's tokenizer(text) adds exactly that
// (Gemma 3's <bos>; this Llama 3 file's ByteLevel post-processor and Qwen3's add nothing).
TEST_P(RealTokenizers, BosAutoAddsWhatHfsTokenizerCallAdds) {
  const std::vector<RealCase> cases = ReadRealCases(GetParam());
  ASSERT_FALSE(cases.empty());
  auto bos = PostProcessorBos(RealTokenizerDir(GetParam()));
  ASSERT_TRUE(bos.has_value()) << bos.error();
  for (size_t index = 0; index < cases.size(); ++index) {
    std::vector<int32_t> expected = cases[index].ids;
    if (*bos) expected.insert(expected.begin(), **bos);
    EXPECT_EQ(expected, cases[index].ids_with_special) << GetParam() << " case " << index;
  }
  if (GetParam() == "gemma3") {
    EXPECT_EQ(*bos, 2) << "Gemma's <bos>";
  }
}

INSTANTIATE_TEST_SUITE_P(Families, RealTokenizers, testing::Values("llama3", "gemma3", "qwen3"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace actex
