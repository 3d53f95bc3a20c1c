// `actex extract` end to end on each model family's fixture folder
// (tests/fixtures/model-families): the binary as users run it, two shards, the
// activations read back from the written shards and compared with what HF computed.

#include <gtest/gtest.h>

#include <string>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

class FamilyExtractTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyExtractTest, ExtractWritesWhatHuggingFaceComputes) {
  const std::string model = std::string(ACTEX_FIXTURES_DIR) + "/model-families/" + GetParam();
  const std::string expected = model + "/expected.safetensors";
  const std::string z = model + "/z.safetensors";
  TempDir dir;
  const std::vector<std::string> cases = {"len33", "len7"};
  std::string corpus;
  for (const std::string& name : cases)
    corpus += InputIdsLine(FixtureIds(expected, name + ".input_ids"));
  ActexProcess process(
      dir.path() + "/run",
      {"extract", "--model", model, "--data", dir.Write("c.jsonl", corpus), "--out",
       dir.path() + "/out", "--layers", "0,3", "--sites", "embed,z,attn_out,mlp_post,resid_post",
       "--shards", "2", "--dtype", "float32"});
  ASSERT_EQ(process.Wait(std::chrono::seconds(120)), 0) << process.err();
  const auto documents = ReadJob(dir.path() + "/out");
  ASSERT_EQ(documents.size(), cases.size());
  // (hook, fixture tensor); z's are in z.safetensors (README-z.md): each shard holds its
  // heads, gathered into the whole width.
  const std::vector<std::pair<std::string, std::string>> sites = {
      {"hook_embed", "hidden_states.0"},
      {"blocks.0.attn.hook_z", "z.0"},
      {"blocks.3.attn.hook_z", "z.3"},
      {"blocks.0.hook_attn_out", "attn_out.0"},
      {"blocks.3.mlp.hook_post", "mlp_post.3"},
      {"blocks.0.hook_resid_post", "hidden_states.1"},
      {"blocks.3.hook_resid_post", "last_layer_pre_norm"}};
  for (size_t doc = 0; doc < cases.size(); ++doc) {
    const DocumentRows& rows = documents.at(static_cast<int64_t>(doc));
    for (const auto& [hook, tensor] : sites) {
      ASSERT_TRUE(rows.sites.contains(hook)) << hook;
      const std::string& file = tensor.starts_with("z.") ? z : expected;
      const Deviation deviation =
          Compare(rows.sites.at(hook), FixtureTensor(file, cases[doc] + "." + tensor));
      std::printf("extract %s %s %s: max|d|/max|ref| %.2g\n", GetParam().c_str(),
                  cases[doc].c_str(), hook.c_str(),
                  deviation.max_abs_error / deviation.max_abs_reference);
      EXPECT_LE(deviation.max_abs_error, 2e-5 * deviation.max_abs_reference)
          << GetParam() << " " << cases[doc] << " " << hook;
    }
  }
}

// Gemma's config says bos_token_id 2. Pre-tokenized ids are HF's already: auto leaves
// them as given; --bos yes puts the BOS first.
TEST(FamilyExtract, BosYesPrependsToPretokenizedDocumentsAndAutoLeavesThem) {
  const std::string model = std::string(ACTEX_FIXTURES_DIR) + "/model-families/gemma2";
  for (const std::string bos : {"auto", "yes"}) {
    TempDir dir;
    ActexProcess process(
        dir.path() + "/run",
        {"extract", "--model", model, "--data", dir.Write("c.jsonl", "{\"input_ids\":[7,8,9]}\n"),
         "--out", dir.path() + "/out", "--layers", "0", "--bos", bos});
    ASSERT_EQ(process.Wait(std::chrono::seconds(120)), 0) << process.err();
    const auto documents = ReadJob(dir.path() + "/out");
    ASSERT_EQ(documents.size(), 1u);
    const std::vector<int32_t> expected =
        bos == "yes" ? std::vector<int32_t>{2, 7, 8, 9} : std::vector<int32_t>{7, 8, 9};
    EXPECT_EQ(documents.at(0).token_ids, expected) << "--bos " << bos;
  }
}

INSTANTIATE_TEST_SUITE_P(ModelFamilies, FamilyExtractTest,
                         ::testing::Values("llama", "mistral", "qwen3", "gemma2", "gpt2",
                                           "gemma3_text"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace actex
