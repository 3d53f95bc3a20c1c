// The BOS that HF's tokenizer(text) adds, read from tokenizer.json's post_processor in
// the layouts the families ship (Llama 3: Sequence[ByteLevel, TemplateProcessing];
// Gemma: TemplateProcessing; Qwen2, GPT-2: ByteLevel).

#include "model/tokenizer/post_processor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

std::string Template(const std::string& token, int id, const std::string& single) {
  return R"({"type": "TemplateProcessing", "single": )" + single +
         R"(, "pair": [], "special_tokens": {")" + token + R"(": {"id": ")" + token +
         R"(", "ids": [)" + std::to_string(id) + R"(], "tokens": [")" + token + R"("]}}})";
}

std::string Leading(const std::string& token) {
  return R"([{"SpecialToken": {"id": ")" + token +
         R"(", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}])";
}

std::expected<std::optional<int32_t>, std::string> BosOf(const std::string& post_processor) {
  TempDir dir;
  dir.Write("tokenizer.json", R"({"version": "1.0", "post_processor": )" + post_processor + "}");
  return PostProcessorBos(dir.path());
}

TEST(PostProcessorBos, Llama3SequenceWithTemplatePrependsBeginOfText) {
  auto bos = BosOf(R"({"type": "Sequence", "processors": [{"type": "ByteLevel",
      "add_prefix_space": true, "trim_offsets": false, "use_regex": true}, )" +
                   Template("<|begin_of_text|>", 128000, Leading("<|begin_of_text|>")) + "]}");
  ASSERT_TRUE(bos.has_value()) << bos.error();
  EXPECT_EQ(*bos, 128000);
}

TEST(PostProcessorBos, GemmaTemplatePrependsBos) {
  auto bos = BosOf(Template("<bos>", 2, Leading("<bos>")));
  ASSERT_TRUE(bos.has_value()) << bos.error();
  EXPECT_EQ(*bos, 2);
}

TEST(PostProcessorBos, ByteLevelNullOrNoFileAddNothing) {
  auto byte_level = BosOf(R"({"type": "ByteLevel", "add_prefix_space": false,
      "trim_offsets": false, "use_regex": false})");
  ASSERT_TRUE(byte_level.has_value()) << byte_level.error();
  EXPECT_FALSE(byte_level->has_value());
  auto none = BosOf("null");
  ASSERT_TRUE(none.has_value()) << none.error();
  EXPECT_FALSE(none->has_value());
  TempDir empty;
  auto no_file = PostProcessorBos(empty.path());
  ASSERT_TRUE(no_file.has_value());
  EXPECT_FALSE(no_file->has_value());
}

TEST(PostProcessorBos, RefusesTemplatesThatAddTokensAfterTheTextOrUnknownTypes) {
  auto eos = BosOf(Template("</s>", 2, R"([{"Sequence": {"id": "A", "type_id": 0}},
      {"SpecialToken": {"id": "</s>", "type_id": 0}}])"));
  ASSERT_FALSE(eos.has_value());
  EXPECT_THAT(eos.error(), HasSubstr("post_processor.single adds tokens after the text"));
  auto bert = BosOf(R"({"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]})");
  ASSERT_FALSE(bert.has_value());
  EXPECT_THAT(bert.error(), HasSubstr("post_processor.type \"BertProcessing\""));
  auto missing = BosOf(R"({"type": "TemplateProcessing", "single": )" + Leading("<bos>") +
                       R"(, "special_tokens": {}})");
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error(), HasSubstr("special_tokens"));
}

}  // namespace
}  // namespace actex
