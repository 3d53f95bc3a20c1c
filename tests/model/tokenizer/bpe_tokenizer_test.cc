#include "model/tokenizer/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/tokenizer_folder.h"

namespace actex {
namespace {

using Ids = std::vector<int32_t>;
using Json = nlohmann::json;

constexpr int32_t kEndOfText = 3256;
constexpr int32_t kImStart = 3257;
constexpr int32_t kImEnd = 3258;

class Qwen2StyleFixture : public testing::Test {
 protected:
  void SetUp() override {
    auto loaded = LoadTokenizer(std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/bpe-qwen2-style");
    ASSERT_TRUE(loaded.has_value()) << loaded.error();
    tokenizer_ = std::move(*loaded);
  }
  Ids Encode(std::string_view text) {
    auto ids = tokenizer_->Encode(text);
    EXPECT_TRUE(ids.has_value()) << ids.error();
    return ids.value_or(Ids{});
  }
  static Ids Concat(std::initializer_list<Ids> parts) {
    Ids all;
    for (const Ids& part : parts) all.insert(all.end(), part.begin(), part.end());
    return all;
  }

  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(Qwen2StyleFixture, RefusesInvalidUtf8NamingTheOffset) {
  for (const std::string_view text : {"ok \xC3", "\xED\xA0\x80",
                                      "abc\xFF"
                                      "def"}) {
    auto ids = tokenizer_->Encode(text);
    ASSERT_FALSE(ids.has_value()) << text;
    EXPECT_NE(ids.error().find("UTF-8"), std::string::npos) << ids.error();
  }
  EXPECT_NE(tokenizer_->Encode("abc\xFF").error().find("offset 3"), std::string::npos);
}

TEST_F(Qwen2StyleFixture, ChatTurnSplitsAroundAddedTokens) {
  const Ids inner = Encode("user\nhi");
  EXPECT_NE(std::find(inner.begin(), inner.end(), 198), inner.end());  // 'Ċ' for "\n"
  EXPECT_EQ(Encode("<|im_start|>user\nhi<|im_end|>"), Concat({{kImStart}, inner, {kImEnd}}));
}

TEST_F(Qwen2StyleFixture, TextBetweenAddedTokensIsEncodedOnItsOwn) {
  EXPECT_EQ(Encode("a<|im_end|>b"), Concat({Encode("a"), {kImEnd}, Encode("b")}));
  EXPECT_EQ(Encode(" <|im_start|> "), Concat({Encode(" "), {kImStart}, Encode(" ")}));
  EXPECT_EQ(Encode("<|im_end|><|im_start|><|endoftext|>"), (Ids{kImEnd, kImStart, kEndOfText}));
}

TEST_F(Qwen2StyleFixture, AddedTokenNearMissesStayText) {
  for (const std::string_view text :
       {"<|im_start", "<|IM_START|>", "<|im_start |>", "im_start|>"}) {
    const Ids ids = Encode(text);
    EXPECT_FALSE(ids.empty()) << text;
    for (const int32_t id : ids) EXPECT_LT(id, kEndOfText) << text;
  }
  // A near miss right before a real token: only the real one becomes an added id.
  EXPECT_EQ(Encode("<|im_start<|im_start|>"), Concat({Encode("<|im_start"), {kImStart}}));
}

TEST_F(Qwen2StyleFixture, DecomposedInputIsComposedBeforeEncoding) {
  EXPECT_EQ(Encode("cafe\u0301"), Encode("caf\u00e9"));
  EXPECT_NE(Encode("cafe\u0301"), Concat({Encode("cafe"), Encode("\u0301")}));
}

TEST_F(Qwen2StyleFixture, EmptyTextGivesNoIds) { EXPECT_TRUE(Encode("").empty()); }

// A minimal byte-level tokenizer.json: the 256 byte symbols (ids 0..255 in byte
// order), the given extra symbols and merges, and the Qwen2 pre-tokenizer shape.
Json MinimalTokenizerJson(const std::vector<std::string>& extra_symbols,
                          const std::vector<std::string>& merges) {
  Json vocab = Json::object();
  const auto symbols = ByteLevelSymbols();
  for (int byte = 0; byte < 256; ++byte) vocab[symbols[byte]] = byte;
  int32_t next_id = 256;
  for (const std::string& symbol : extra_symbols) vocab[symbol] = next_id++;
  return Json{
      {"version", "1.0"},
      {"added_tokens", Json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         Json::array(
             {{{"type", "Split"},
               {"pattern", {{"Regex", " ?\\p{L}+|\\s+"}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"byte_fallback", false},
        {"vocab", vocab},
        {"merges", merges}}}};
}

std::expected<std::unique_ptr<BpeTokenizer>, std::string> FromJson(const Json& json) {
  return BpeTokenizer::Create("test/tokenizer.json", json.dump());
}

Ids EncodeWith(const Json& json, std::string_view text) {
  auto tokenizer = FromJson(json);
  EXPECT_TRUE(tokenizer.has_value()) << tokenizer.error();
  if (!tokenizer) return {};
  auto ids = (*tokenizer)->Encode(text);
  EXPECT_TRUE(ids.has_value()) << ids.error();
  return ids.value_or(Ids{});
}

TEST(BpeTokenizer, MergesApplyInRankOrderNotTextOrder) {
  // ids: a=97, b=98, c=99, then "ab"=256, "bc"=257
  EXPECT_EQ(EncodeWith(MinimalTokenizerJson({"ab", "bc"}, {"b c", "a b"}), "abc"), (Ids{97, 257}));
  EXPECT_EQ(EncodeWith(MinimalTokenizerJson({"ab", "bc"}, {"a b", "b c"}), "abc"), (Ids{256, 99}));
}

TEST(BpeTokenizer, EqualRankMergesGoLeftmostFirst) {
  EXPECT_EQ(EncodeWith(MinimalTokenizerJson({"aa"}, {"a a"}), "aaa"), (Ids{256, 97}));
  EXPECT_EQ(EncodeWith(MinimalTokenizerJson({"aa", "aaaa"}, {"a a", "aa aa"}), "aaaaa"),
            (Ids{257, 97}));
}

TEST(BpeTokenizer, AcceptsMergesWrittenAsPairs) {
  Json json = MinimalTokenizerJson({"ab"}, {});
  json["model"]["merges"] = Json::array({Json::array({"a", "b"})});
  EXPECT_EQ(EncodeWith(json, "ab"), (Ids{256}));
}

TEST(BpeTokenizer, IgnoreMergesTakesAWholePieceFromTheVocabulary) {
  Json json = MinimalTokenizerJson({"ab", "abc"}, {"a b"});
  EXPECT_EQ(EncodeWith(json, "abc"), (Ids{256, 99}));
  json["model"]["ignore_merges"] = true;
  EXPECT_EQ(EncodeWith(json, "abc"), (Ids{257}));
}

TEST(BpeTokenizer, SequenceNormalizerWithNfcComposes) {
  Json json = MinimalTokenizerJson({}, {});
  json["normalizer"] = {{"type", "Sequence"}, {"normalizers", Json::array({{{"type", "NFC"}}})}};
  EXPECT_EQ(EncodeWith(json, "e\u0301"), (Ids{0xC3, 0xA9}));
  json["normalizer"] = nullptr;
  EXPECT_EQ(EncodeWith(json, "e\u0301"), (Ids{'e', 0xCC, 0x81}));
}

TEST(BpeTokenizer, ByteWithoutVocabularySymbolIsAnErrorNotACrash) {
  Json json = MinimalTokenizerJson({}, {});
  json["model"]["vocab"].erase("z");
  auto tokenizer = FromJson(json);
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error();
  auto ids = (*tokenizer)->Encode("lazy");
  ASSERT_FALSE(ids.has_value());
  EXPECT_NE(ids.error().find("0x7A"), std::string::npos) << ids.error();
}

TEST(BpeTokenizer, UnknownBytesBecomeTheUnkTokenWhenOneIsDeclared) {
  Json json = MinimalTokenizerJson({"<unk>"}, {});
  json["model"]["vocab"].erase("y");
  json["model"]["vocab"].erase("z");
  json["model"]["unk_token"] = "<unk>";
  EXPECT_EQ(EncodeWith(json, "ayzb"), (Ids{'a', 256, 256, 'b'}));
  json["model"]["fuse_unk"] = true;
  EXPECT_EQ(EncodeWith(json, "ayzb"), (Ids{'a', 256, 'b'}));
}

// SentencePiece-style BPE in tokenizer.json (Gemma): no ByteLevel step, so symbols are
// characters; spaces become "▁" and each piece ends after one; a character outside
// the vocabulary becomes the <0xXX> tokens of its bytes.
Json CharacterTokenizerJson() {
  Json vocab = {{"<unk>", 0}, {"<0xC3>", 1}, {"<0xA9>", 2}, {"a", 3},  {"b", 4},
                {"▁", 5},     {"a▁", 6},     {"ab", 7},     {"ab▁", 8}};
  return Json{
      {"added_tokens", Json::array()},
      {"normalizer", {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}},
      {"pre_tokenizer",
       {{"type", "Split"},
        {"pattern", {{"String", "▁"}}},
        {"behavior", "MergedWithPrevious"},
        {"invert", false}}},
      {"model",
       {{"type", "BPE"},
        {"unk_token", "<unk>"},
        {"byte_fallback", true},
        {"vocab", vocab},
        {"merges", Json::array({"a ▁", "a b", "ab ▁"})}}}};
}

TEST(BpeTokenizer, CharacterBpeMergesAfterReplacingSpacesAndSplittingAfterThem) {
  // "ab a" -> "ab▁a" -> pieces "ab▁", "a": [ab▁] [a]
  EXPECT_EQ(EncodeWith(CharacterTokenizerJson(), "ab a"), (Ids{8, 3}));
  // "a  b": pieces "a▁", "▁" (a space after a space stands alone), "b"
  EXPECT_EQ(EncodeWith(CharacterTokenizerJson(), "a  b"), (Ids{6, 5, 4}));
}

TEST(BpeTokenizer, CharacterBpeFallsBackOnBytesThenOnTheUnkToken) {
  Json json = CharacterTokenizerJson();
  EXPECT_EQ(EncodeWith(json, "é"), (Ids{1, 2}));       // U+00E9 is C3 A9
  EXPECT_EQ(EncodeWith(json, "aüb"), (Ids{3, 0, 4}));  // no <0xBC> token: unk
  json["model"]["byte_fallback"] = false;
  EXPECT_EQ(EncodeWith(json, "é"), (Ids{0}));
}

TEST(BpeTokenizer, PrependNormalizerAddsToTextThatIsNotEmpty) {
  Json json = CharacterTokenizerJson();
  json["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers", Json::array({{{"type", "Prepend"}, {"prepend", "▁"}}, json["normalizer"]})}};
  EXPECT_EQ(EncodeWith(json, "ab"), (Ids{5, 7}));
  EXPECT_EQ(EncodeWith(json, ""), (Ids{}));
}

TEST(BpeTokenizer, NormalizedAddedTokensMatchAfterNormalization) {
  Json json = MinimalTokenizerJson({}, {});
  json["normalizer"] = {{"type", "NFC"}};
  json["added_tokens"] = Json::array({{{"id", 500},
                                       {"content", "[caf\u00e9]"},
                                       {"normalized", true},
                                       {"special", false},
                                       {"lstrip", false},
                                       {"rstrip", false},
                                       {"single_word", false}}});
  EXPECT_EQ(EncodeWith(json, "x[cafe\u0301]"), (Ids{'x', 500}));
}

// Each unsupported or broken field yields an error naming the file and the field.
struct RefusalCase {
  std::string name;
  void (*edit)(Json*);
  std::string expected_fragment;
};

class BpeTokenizerRefuses : public testing::TestWithParam<RefusalCase> {};

TEST_P(BpeTokenizerRefuses, NamingFileAndField) {
  Json json = MinimalTokenizerJson({"ab"}, {"a b"});
  GetParam().edit(&json);
  auto tokenizer = FromJson(json);
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find("test/tokenizer.json"), std::string::npos) << tokenizer.error();
  EXPECT_NE(tokenizer.error().find(GetParam().expected_fragment), std::string::npos)
      << tokenizer.error();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BpeTokenizerRefuses,
    testing::Values(
        RefusalCase{"UnknownModelType", [](Json* j) { (*j)["model"]["type"] = "WordPiece"; },
                    "model.type \"WordPiece\""},
        RefusalCase{"UnknownNormalizer",
                    [](Json* j) {
                      (*j)["normalizer"] = {{"type", "Lowercase"}};
                    },
                    "normalizer.type \"Lowercase\""},
        RefusalCase{"UnknownNormalizerInSequence",
                    [](Json* j) {
                      (*j)["normalizer"] = {
                          {"type", "Sequence"},
                          {"normalizers", Json::array({{{"type", "NFC"}}, {{"type", "Strip"}}})}};
                    },
                    "normalizer.normalizers[1].type"},
        RefusalCase{"UnknownPreTokenizer",
                    [](Json* j) {
                      (*j)["pre_tokenizer"]["pretokenizers"][0] = {{"type", "Metaspace"}};
                    },
                    "pre_tokenizer.pretokenizers[0].type \"Metaspace\""},
        RefusalCase{
            "SplitBehaviorOtherThanIsolated",
            [](Json* j) { (*j)["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed"; },
            "pre_tokenizer.pretokenizers[0].behavior"},
        RefusalCase{"ReplaceOfARegex",
                    [](Json* j) {
                      (*j)["normalizer"] = {
                          {"type", "Replace"}, {"pattern", {{"Regex", " +"}}}, {"content", "_"}};
                    },
                    "normalizer.pattern"},
        RefusalCase{
            "AddedTokenWithLstrip",
            [](Json* j) {
              (*j)["added_tokens"] = Json::array(
                  {{{"id", 300}, {"content", "<x>"}, {"lstrip", true}, {"normalized", false}}});
            },
            "added_tokens[0] (\"<x>\"): lstrip"},
        RefusalCase{"MergeOfUnknownSymbol",
                    [](Json* j) { (*j)["model"]["merges"] = Json::array({"a q\u00e9"}); },
                    "model.merges[0]"},
        RefusalCase{"MergeWithoutSpace",
                    [](Json* j) { (*j)["model"]["merges"] = Json::array({"ab"}); },
                    "model.merges[0]"},
        RefusalCase{"ContinuingSubwordPrefix",
                    [](Json* j) { (*j)["model"]["continuing_subword_prefix"] = "##"; },
                    "model.continuing_subword_prefix"},
        RefusalCase{
            "InvalidSplitRegex",
            [](Json* j) { (*j)["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "([a-"; },
            "([a-"}),
    [](const testing::TestParamInfo<RefusalCase>& info) { return info.param.name; });

// `inner` wrapped in `depth` Sequence components whose children are listed under
// `children`: nesting that unbounded recursion in the loader would follow.
std::string Nested(const std::string& children, const std::string& inner, int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += R"({"type":"Sequence",")" + children + R"(":[)";
  text += inner;
  for (int i = 0; i < depth; ++i) text += "]}";
  return text;
}

// Found by fuzzing: Sequence normalizers and pre-tokenizers were parsed by
// unbounded recursion, so a few MB of nesting crashed the loader.
TEST(BpeTokenizer, RefusesSequencesNestedTooDeepWithoutCrashing) {
  const std::string json = MinimalTokenizerJson({}, {}).dump();
  const std::string normalizer = R"("normalizer":null)";
  ASSERT_NE(json.find(normalizer), std::string::npos);
  std::string nested = json;
  nested.replace(json.find(normalizer), normalizer.size(),
                 R"("normalizer":)" + Nested("normalizers", R"({"type":"NFC"})", 100000));
  auto tokenizer = BpeTokenizer::Create("test/tokenizer.json", nested);
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_EQ(tokenizer.error(), "test/tokenizer.json: normalizer nests Sequences more than 32 deep");

  const std::string byte_level =
      R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":true})";
  Json pre = MinimalTokenizerJson({}, {});
  pre["pre_tokenizer"] = nullptr;
  nested = pre.dump();
  const std::string null_pre = R"("pre_tokenizer":null)";
  nested.replace(nested.find(null_pre), null_pre.size(),
                 R"("pre_tokenizer":)" + Nested("pretokenizers", byte_level, 100000));
  tokenizer = BpeTokenizer::Create("test/tokenizer.json", nested);
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_EQ(tokenizer.error(),
            "test/tokenizer.json: pre_tokenizer nests Sequences more than 32 deep");

  // Nesting as deep as the limit still loads.
  nested = pre.dump();
  nested.replace(nested.find(null_pre), null_pre.size(),
                 R"("pre_tokenizer":)" + Nested("pretokenizers", byte_level, 32));
  tokenizer = BpeTokenizer::Create("test/tokenizer.json", nested);
  EXPECT_TRUE(tokenizer.has_value()) << tokenizer.error();
}

// Found by fuzzing: refusals quoted the offending value with dump(), which recurses
// once per nesting level.
TEST(BpeTokenizer, RefusalsDescribeDeeplyNestedValuesWithoutQuotingThem) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string json = MinimalTokenizerJson({}, {}).dump();
  const std::string merges = R"("merges":[])";
  ASSERT_NE(json.find(merges), std::string::npos);
  std::string bad = json;
  bad.replace(json.find(merges), merges.size(), R"("merges":[)" + deep + "]");
  auto tokenizer = BpeTokenizer::Create("test/tokenizer.json", bad);
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find("model.merges[0] must be \"a b\" or [\"a\", \"b\"], found "
                                   "an array of 1 elements"),
            std::string::npos)
      << tokenizer.error().substr(0, 300);

  const std::string dropout = R"("dropout":null)";
  ASSERT_NE(json.find(dropout), std::string::npos);
  bad = json;
  bad.replace(json.find(dropout), dropout.size(), R"("dropout":)" + deep);
  tokenizer = BpeTokenizer::Create("test/tokenizer.json", bad);
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find("model.dropout an array of 1 elements is not supported"),
            std::string::npos)
      << tokenizer.error().substr(0, 300);
}

TEST(BpeTokenizer, CorruptJsonIsAnErrorNamingTheFile) {
  auto tokenizer = BpeTokenizer::Create("dir/tokenizer.json", "{\"model\": {\"type\": ");
  ASSERT_FALSE(tokenizer.has_value());
  EXPECT_NE(tokenizer.error().find("dir/tokenizer.json"), std::string::npos) << tokenizer.error();
  EXPECT_NE(tokenizer.error().find("JSON"), std::string::npos) << tokenizer.error();
}

}  // namespace
}  // namespace actex
