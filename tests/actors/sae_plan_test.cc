// --sae planned against the model (actors/sae_plan.h, PlanExtraction): sites resolved,
// captured when --sites leaves them out, refused when ambiguous or repeated; and the
// SAEs loaded and checked against their sites.

#include "actors/sae_plan.h"

#include <gtest/gtest.h>

#include "actors/extract_options.h"
#include "model/config_reader.h"
#include "tests/support/fixture_dirs.h"

namespace actex {
namespace {

const std::string kSae = std::string(ACTEX_FIXTURES_DIR) + "/sae/saelens-topk";

ExtractOptions SaeOptions(std::vector<int> layers, std::vector<std::string> saes) {
  ExtractOptions options;
  options.model_dir = kTinyModelDir;
  options.data = {"c.jsonl"};
  options.out_dir = "out";
  options.layers = std::move(layers);
  options.sites = {"mlp_out"};
  options.bos = "no";
  options.saes = std::move(saes);
  return options;
}

TEST(SaePlan, AShortFormIsResolvedAndTheSiteCapturedForStatisticsOnly) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config) << config.error();
  auto plan = PlanExtraction(SaeOptions({1}, {"resid_post=" + kSae}), *config);
  ASSERT_TRUE(plan) << plan.error();
  ASSERT_EQ(plan->saes.size(), 1u);
  const Site resid{SiteKind::kResidPost, 1};
  EXPECT_EQ(plan->saes[0].site, resid);
  EXPECT_EQ(plan->sites, (std::vector<Site>{{SiteKind::kMlpOut, 1}, resid}));
  EXPECT_TRUE(plan->IsStatisticsOnly(resid));
  EXPECT_EQ(ResolvedOptions(SaeOptions({1}, {"resid_post=" + kSae}), *plan).sites,
            (std::vector<std::string>{"blocks.1.hook_mlp_out"}));
}

TEST(SaePlan, AmbiguousOrRepeatedSitesAreRefusedNamingTheEntry) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config) << config.error();
  auto several = PlanSaes({"resid_post=" + kSae}, {0, 1}, *config);
  ASSERT_FALSE(several);
  EXPECT_NE(several.error().find("names 2 sites at --layers"), std::string::npos)
      << several.error();
  auto twice = PlanSaes({"resid_post=" + kSae, "blocks.1.hook_resid_post=" + kSae}, {1}, *config);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().find("a second SAE on blocks.1.hook_resid_post"), std::string::npos)
      << twice.error();
}

TEST(SaePlan, LoadingSetsTheTopKSaesOwnKAndDigestsItsFiles) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config) << config.error();
  auto saes = PlanSaes({"blocks.1.hook_resid_post=" + kSae}, {1}, *config);
  ASSERT_TRUE(saes) << saes.error();
  ASSERT_TRUE(LoadPlannedSaes(*saes, 64, 32, *config));
  EXPECT_EQ((*saes)[0].k, 16);  // the fixture's k, whatever --sae-top-k says
  EXPECT_EQ((*saes)[0].record.d_sae, 256);
  EXPECT_EQ((*saes)[0].record.files.size(), 2u);
  EXPECT_EQ((*saes)[0].record.files.at("cfg.json").size(), 64u);
}

// A token has at most d_sae latents: a larger --sae-top-k would only store empty
// columns (2e9 of them aborted the writer on its allocation).
TEST(SaePlan, TopKIsAtMostTheSaesWidth) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config) << config.error();
  const std::string standard = std::string(ACTEX_FIXTURES_DIR) + "/sae/saelens-standard";
  for (const auto& [asked, kept] : {std::pair<int64_t, int64_t>{64, 64}, {2'000'000'000, 256}}) {
    auto saes = PlanSaes({"blocks.1.hook_resid_post=" + standard}, {1}, *config);
    ASSERT_TRUE(saes) << saes.error();
    ASSERT_TRUE(LoadPlannedSaes(*saes, asked, 32, *config));
    EXPECT_EQ((*saes)[0].k, kept) << asked;
    EXPECT_EQ((*saes)[0].record.k, kept) << asked;
  }
}

// The writer keeps d_sae × --sae-examples examples twice per SAE: a typo of 2e9 is
// refused before any work, naming the flag and the memory, not an abort in the writer.
TEST(SaePlan, ExamplesPastTheMemoryBudgetAreRefusedNamingTheFlag) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config) << config.error();
  const std::string standard = std::string(ACTEX_FIXTURES_DIR) + "/sae/saelens-standard";
  for (int64_t examples : {int64_t{1} << 20, int64_t{2'000'000'000}}) {
    auto saes = PlanSaes({"blocks.1.hook_resid_post=" + standard}, {1}, *config);
    ASSERT_TRUE(saes) << saes.error();
    auto loaded = LoadPlannedSaes(*saes, 64, examples, *config);
    ASSERT_FALSE(loaded) << examples;
    EXPECT_EQ(loaded.error().find("--sae-examples " + std::to_string(examples) + " would keep "),
              0u)
        << loaded.error();
    EXPECT_NE(loaded.error().find("256 latents"), std::string::npos) << loaded.error();
  }
  auto saes = PlanSaes({"blocks.1.hook_resid_post=" + standard}, {1}, *config);
  ASSERT_TRUE(saes && LoadPlannedSaes(*saes, 64, 4096, *config)) << "256 x 4096: 32 MiB";
}

// Hosts compare SaeFingerprint at the rendezvous (RunFingerprint's "SAE files"): two SAEs
// of one site differ there, by their files' digests, whatever their folders.
TEST(SaePlan, TheFingerprintTellsSaesByTheirFiles) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config) << config.error();
  auto fingerprint_of = [&](const std::string& dir) {
    auto saes = PlanSaes({"blocks.1.hook_resid_post=" + dir}, {1}, *config);
    EXPECT_TRUE(saes && LoadPlannedSaes(*saes, 8, 32, *config));
    return SaeFingerprint(*saes);
  };
  const std::string standard = std::string(ACTEX_FIXTURES_DIR) + "/sae/saelens-standard";
  EXPECT_EQ(fingerprint_of(standard), fingerprint_of(standard + "/"));
  EXPECT_NE(fingerprint_of(standard), fingerprint_of(kSae));
  EXPECT_EQ(SaeFingerprint({}), "none");
}

TEST(SaePlan, AnSaeOfAnotherLayerIsRefusedNamingBoth) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config) << config.error();
  auto saes = PlanSaes({"blocks.0.hook_resid_post=" + kSae}, {0}, *config);
  ASSERT_TRUE(saes) << saes.error();
  auto loaded = LoadPlannedSaes(*saes, 64, 32, *config);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().find("blocks.0.hook_resid_post"), std::string::npos) << loaded.error();
  EXPECT_NE(loaded.error().find("blocks.1.hook_resid_post"), std::string::npos) << loaded.error();
}

}  // namespace
}  // namespace actex
