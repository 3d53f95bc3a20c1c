// `actex extract` end to end on each mixture-of-experts fixture folder
// (tests/fixtures/moe-families): the binary as users run it, two shards, the routing
// sites read back from the written shards and compared with what HF computed.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

std::string MoeFixture(const std::string& family) {
  return std::string(ACTEX_FIXTURES_DIR) + "/moe-families/" + family;
}

// Runs `actex extract` of the fixture's len33 and len7 documents into `out` with
// two shards and reads the job back.
std::map<int64_t, DocumentRows> Extract(const std::string& family, const TempDir& dir,
                                        const std::string& sites, const std::string& dtype) {
  const std::string expected = MoeFixture(family) + "/expected.safetensors";
  const std::string corpus = InputIdsLine(FixtureIds(expected, "len33.input_ids")) +
                             InputIdsLine(FixtureIds(expected, "len7.input_ids"));
  ActexProcess process(dir.path() + "/run",
                       {"extract", "--model", MoeFixture(family), "--data",
                        dir.Write("c.jsonl", corpus), "--out", dir.path() + "/out", "--layers",
                        "0-3", "--sites", sites, "--shards", "2", "--dtype", dtype});
  EXPECT_EQ(process.Wait(std::chrono::seconds(120)), 0) << process.err();
  return ReadJob(dir.path() + "/out");
}

class MoeExtractTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MoeExtractTest, ExtractWritesTheRoutingHuggingFaceComputed) {
  const std::string family = GetParam();
  const std::string expected = MoeFixture(family) + "/expected.safetensors";
  TempDir dir;
  const auto documents = Extract(
      family, dir, "z,router_logits,expert_ids,expert_weights,mlp_out,resid_post", "float32");
  ASSERT_EQ(documents.size(), 2u);
  const std::vector<std::string> cases = {"len33", "len7"};
  for (size_t doc = 0; doc < cases.size(); ++doc) {
    const DocumentRows& rows = documents.at(static_cast<int64_t>(doc));
    for (int layer = 0; layer < 4; ++layer) {
      const std::string l = std::to_string(layer), block = "blocks." + l + ".";
      // qwen2_moe's layer 2 is a dense MLP: no router, so no routing sites at all.
      const bool routed = !(family == "qwen2_moe" && layer == 2);
      EXPECT_EQ(rows.sites.contains(block + "mlp.hook_router_logits"), routed) << block;
      EXPECT_EQ(rows.integer_sites.contains(block + "mlp.hook_expert_indices"), routed) << block;
      std::vector<std::pair<std::string, std::string>> compared = {
          {block + "attn.hook_z", "z." + l}, {block + "hook_mlp_out", "mlp_out." + l}};
      if (routed) {
        compared.push_back({block + "mlp.hook_router_logits", "router_logits." + l});
        compared.push_back({block + "mlp.hook_routing_weights", "expert_weights." + l});
        EXPECT_EQ(rows.integer_sites.at(block + "mlp.hook_expert_indices"),
                  FixtureIds(expected, cases[doc] + ".expert_ids." + l))
            << family << " " << cases[doc] << " layer " << layer;
      }
      for (const auto& [hook, tensor] : compared) {
        ASSERT_TRUE(rows.sites.contains(hook)) << hook;
        const Deviation deviation =
            Compare(rows.sites.at(hook), FixtureTensor(expected, cases[doc] + "." + tensor));
        EXPECT_LE(deviation.max_abs_error, 2e-5 * deviation.max_abs_reference)
            << family << " " << cases[doc] << " " << hook;
      }
    }
  }
}

// Expert ids are indices: stored as I32 whatever --dtype says, and exact.
TEST_P(MoeExtractTest, ExpertIdsStayExactIntegersUnderBfloat16Output) {
  const std::string family = GetParam();
  const std::string expected = MoeFixture(family) + "/expected.safetensors";
  TempDir dir;
  const auto documents = Extract(family, dir, "expert_ids", "bfloat16");
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents.at(0).integer_sites.at("blocks.3.mlp.hook_expert_indices"),
            FixtureIds(expected, "len33.expert_ids.3"));
  std::ifstream file(dir.path() + "/out/host_00/metadata.json");
  const nlohmann::json metadata = nlohmann::json::parse(file);
  const std::vector<int> routed = metadata["config"]["sparse_layers"];
  const std::vector<int> expected_routed =
      family == "qwen2_moe" ? std::vector<int>{0, 1, 3} : std::vector<int>{0, 1, 2, 3};
  EXPECT_EQ(routed, expected_routed);
}

// The tools downstream of an extraction take routing sites as they come: verify checks
// them, shuffle moves the expert ids with their rows under another dtype, and the
// shuffle verifies too.
TEST(MoeExtract, VerifyAndShuffleTakeRoutingSites) {
  TempDir dir;
  Extract("qwen2_moe", dir, "router_logits,expert_ids,expert_weights,mlp_out", "float32");
  const std::string out = dir.path() + "/out", shuffled = dir.path() + "/shuffled";
  ActexProcess verify(dir.path() + "/verify", {"verify", out});
  EXPECT_EQ(verify.Wait(std::chrono::seconds(60)), 0) << verify.out() << verify.err();
  ActexProcess shuffle(dir.path() + "/shuffle",
                       {"shuffle", out, "--to", shuffled, "--dtype", "bfloat16"});
  ASSERT_EQ(shuffle.Wait(std::chrono::seconds(60)), 0) << shuffle.err();
  ActexProcess verify_shuffled(dir.path() + "/verify-shuffled", {"verify", shuffled});
  EXPECT_EQ(verify_shuffled.Wait(std::chrono::seconds(60)), 0)
      << verify_shuffled.out() << verify_shuffled.err();
  std::ifstream file(shuffled + "/metadata.json");
  const nlohmann::json metadata = nlohmann::json::parse(file);
  bool ids_are_i32 = false;
  for (const nlohmann::json& site : metadata["parameters"]["sites"]) {
    if (site["name"] == "blocks.3.mlp.hook_expert_indices")
      ids_are_i32 = site.value("dtype", "") == "I32";
  }
  EXPECT_TRUE(ids_are_i32) << metadata["parameters"].dump();
}

INSTANTIATE_TEST_SUITE_P(MoeFamilies, MoeExtractTest,
                         ::testing::Values("mixtral", "qwen2_moe", "qwen3_moe", "olmoe"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace actex
