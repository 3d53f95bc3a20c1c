#include "model/sites.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model_config.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

// Three layers, the middle one dense (as qwen2_moe's mlp_only_layers makes it).
ModelConfig MixtureConfig() {
  ModelConfig config;
  config.name = "tiny-moe", config.model_type = "qwen2_moe";
  config.hidden = 64, config.intermediate = 96, config.layers = 3;
  config.heads = 4, config.head_dim = 16;
  config.moe = {
      .experts = 8, .top_k = 2, .expert_intermediate = 32, .layer_sparse = {true, false, true}};
  return config;
}

ModelConfig TwoLayerConfig() {
  ModelConfig config;
  config.hidden = 64, config.intermediate = 176, config.layers = 2;
  config.heads = 3, config.head_dim = 32;  // heads x head_dim need not be hidden (Qwen3)
  return config;
}

TEST(Site, HookNamesFollowTransformerLens) {
  EXPECT_EQ((Site{SiteKind::kEmbed, -1}).HookName(), "hook_embed");
  EXPECT_EQ((Site{SiteKind::kResidPre, 3}).HookName(), "blocks.3.hook_resid_pre");
  EXPECT_EQ((Site{SiteKind::kZ, 3}).HookName(), "blocks.3.attn.hook_z");
  EXPECT_EQ((Site{SiteKind::kAttnOut, 3}).HookName(), "blocks.3.hook_attn_out");
  EXPECT_EQ((Site{SiteKind::kResidMid, 3}).HookName(), "blocks.3.hook_resid_mid");
  EXPECT_EQ((Site{SiteKind::kMlpPost, 3}).HookName(), "blocks.3.mlp.hook_post");
  EXPECT_EQ((Site{SiteKind::kMlpOut, 3}).HookName(), "blocks.3.hook_mlp_out");
  EXPECT_EQ((Site{SiteKind::kResidPost, 20}).HookName(), "blocks.20.hook_resid_post");
  EXPECT_EQ((Site{SiteKind::kLnFinal, -1}).HookName(), "ln_final.hook_normalized");
}

TEST(Site, WidthIsIntermediateForMlpPostHeadsTimesHeadDimForZElseHidden) {
  const ModelConfig config = TwoLayerConfig();
  EXPECT_EQ((Site{SiteKind::kMlpPost, 0}).Width(config), 176);
  EXPECT_EQ((Site{SiteKind::kZ, 0}).Width(config), 96);
  for (SiteKind kind :
       {SiteKind::kEmbed, SiteKind::kResidPre, SiteKind::kAttnOut, SiteKind::kResidMid,
        SiteKind::kMlpOut, SiteKind::kResidPost, SiteKind::kLnFinal}) {
    EXPECT_EQ((Site{kind, 0}).Width(config), 64);
  }
}

TEST(Site, LastLayerNeededStopsAsEarlyAsPossible) {
  const ModelConfig config = TwoLayerConfig();
  EXPECT_EQ((Site{SiteKind::kEmbed, -1}).LastLayerNeeded(config), -1);
  EXPECT_EQ((Site{SiteKind::kResidPre, 0}).LastLayerNeeded(config), -1);
  EXPECT_EQ((Site{SiteKind::kResidPre, 1}).LastLayerNeeded(config), 0);
  EXPECT_EQ((Site{SiteKind::kZ, 1}).LastLayerNeeded(config), 1);
  EXPECT_EQ((Site{SiteKind::kAttnOut, 1}).LastLayerNeeded(config), 1);
  EXPECT_EQ((Site{SiteKind::kResidPost, 0}).LastLayerNeeded(config), 0);
  EXPECT_EQ((Site{SiteKind::kLnFinal, -1}).LastLayerNeeded(config), 1);
}

TEST(ParseSites, ShortFormsAreTakenAtEveryGivenLayerInForwardOrder) {
  auto sites = ParseSites({"resid_post", "mlp_post", "embed", "ln_final", "z", "resid_pre"}, {1, 0},
                          TwoLayerConfig());
  ASSERT_TRUE(sites.has_value()) << sites.error();
  const std::vector<Site> expected = {{SiteKind::kEmbed, -1},    {SiteKind::kResidPre, 0},
                                      {SiteKind::kZ, 0},         {SiteKind::kMlpPost, 0},
                                      {SiteKind::kResidPost, 0}, {SiteKind::kResidPre, 1},
                                      {SiteKind::kZ, 1},         {SiteKind::kMlpPost, 1},
                                      {SiteKind::kResidPost, 1}, {SiteKind::kLnFinal, -1}};
  EXPECT_EQ(*sites, expected);
}

TEST(ParseSites, AcceptsFullHookNamesAndRemovesDuplicates) {
  auto sites = ParseSites(
      {"blocks.1.hook_attn_out", "blocks.0.hook_resid_mid", "attn_out", " blocks.1.hook_attn_out ",
       "hook_embed", "ln_final.hook_normalized", "blocks.0.mlp.hook_post", "blocks.0.hook_mlp_out",
       "blocks.1.hook_resid_pre", "blocks.0.hook_resid_post", "blocks.0.attn.hook_z"},
      {1}, TwoLayerConfig());
  ASSERT_TRUE(sites.has_value()) << sites.error();
  const std::vector<Site> expected = {
      {SiteKind::kEmbed, -1},   {SiteKind::kZ, 0},       {SiteKind::kResidMid, 0},
      {SiteKind::kMlpPost, 0},  {SiteKind::kMlpOut, 0},  {SiteKind::kResidPost, 0},
      {SiteKind::kResidPre, 1}, {SiteKind::kAttnOut, 1}, {SiteKind::kLnFinal, -1}};
  EXPECT_EQ(*sites, expected);
}

TEST(ParseSites, NamesTheBadEntry) {
  for (const char* bad : {"resid", "blocks.x.hook_resid_post", "blocks.0.hook_resid", "blocks.0",
                          "blocks..hook_resid_post", "blocks.0.hook_resid_post.extra"}) {
    auto sites = ParseSites({"embed", bad}, {0}, TwoLayerConfig());
    ASSERT_FALSE(sites.has_value()) << bad;
    EXPECT_THAT(sites.error(), HasSubstr(std::string("\"") + bad + "\"")) << bad;
  }
  auto empty = ParseSites({"embed", ""}, {0}, TwoLayerConfig());
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error(), HasSubstr("empty"));
  EXPECT_FALSE(ParseSites({}, {0}, TwoLayerConfig()).has_value());
}

TEST(ParseSites, NamesOutOfRangeLayersAndTheValidRange) {
  auto full = ParseSites({"blocks.2.hook_resid_post"}, {}, TwoLayerConfig());
  ASSERT_FALSE(full.has_value());
  EXPECT_THAT(full.error(), HasSubstr("\"blocks.2.hook_resid_post\""));
  EXPECT_THAT(full.error(), HasSubstr("layer 2 is out of range"));
  EXPECT_THAT(full.error(), HasSubstr("(0..1)"));

  auto given = ParseSites({"resid_post"}, {0, 5}, TwoLayerConfig());
  ASSERT_FALSE(given.has_value());
  EXPECT_THAT(given.error(), HasSubstr("layer 5 is out of range"));
  EXPECT_THAT(given.error(), HasSubstr("(0..1)"));

  auto negative = ParseSites({"resid_post"}, {-1}, TwoLayerConfig());
  ASSERT_FALSE(negative.has_value());
  EXPECT_THAT(negative.error(), HasSubstr("layer -1 is out of range"));
}

TEST(ParseSites, ShortPerLayerFormNeedsLayers) {
  auto sites = ParseSites({"resid_post"}, {}, TwoLayerConfig());
  ASSERT_FALSE(sites.has_value());
  EXPECT_THAT(sites.error(), HasSubstr("\"resid_post\""));
  EXPECT_THAT(sites.error(), HasSubstr("no layers"));
  // embed and ln_final need none.
  auto ends = ParseSites({"embed", "ln_final"}, {}, TwoLayerConfig());
  ASSERT_TRUE(ends.has_value()) << ends.error();
  EXPECT_EQ(ends->size(), 2u);
}

TEST(Site, RoutingSitesAreNamedAsTheBarAndTransformerLensNameThem) {
  EXPECT_EQ((Site{SiteKind::kRouterLogits, 1}).HookName(), "blocks.1.mlp.hook_router_logits");
  EXPECT_EQ((Site{SiteKind::kExpertIds, 1}).HookName(), "blocks.1.mlp.hook_expert_indices");
  EXPECT_EQ((Site{SiteKind::kExpertWeights, 1}).HookName(), "blocks.1.mlp.hook_routing_weights");
  const ModelConfig config = MixtureConfig();
  EXPECT_EQ((Site{SiteKind::kRouterLogits, 0}).Width(config), 8);
  EXPECT_EQ((Site{SiteKind::kExpertIds, 0}).Width(config), 2);
  EXPECT_EQ((Site{SiteKind::kExpertWeights, 0}).Width(config), 2);
  EXPECT_TRUE((Site{SiteKind::kExpertIds, 0}).IsInteger());
  EXPECT_FALSE((Site{SiteKind::kExpertWeights, 0}).IsInteger());
  EXPECT_FALSE((Site{SiteKind::kRouterLogits, 0}).IsInteger());
}

TEST(ParseSites, RoutingShortFormsAreTakenAtRoutedLayersOnlyAndMlpPostAtDenseOnes) {
  auto sites = ParseSites({"expert_ids", "router_logits", "mlp_post", "expert_weights"}, {0, 1, 2},
                          MixtureConfig());
  ASSERT_TRUE(sites.has_value()) << sites.error();
  const std::vector<Site> expected = {{SiteKind::kRouterLogits, 0},  {SiteKind::kExpertIds, 0},
                                      {SiteKind::kExpertWeights, 0}, {SiteKind::kMlpPost, 1},
                                      {SiteKind::kRouterLogits, 2},  {SiteKind::kExpertIds, 2},
                                      {SiteKind::kExpertWeights, 2}};
  EXPECT_EQ(*sites, expected);
}

TEST(ParseSites, RefusesARoutingSiteWhereThereIsNoRouterNamingWhy) {
  auto dense_layer = ParseSites({"blocks.1.mlp.hook_router_logits"}, {}, MixtureConfig());
  ASSERT_FALSE(dense_layer.has_value());
  EXPECT_THAT(dense_layer.error(), HasSubstr("\"blocks.1.mlp.hook_router_logits\""));
  EXPECT_THAT(dense_layer.error(), HasSubstr("layer 1 of tiny-moe is a dense MLP"));

  auto only_dense = ParseSites({"expert_ids"}, {1}, MixtureConfig());
  ASSERT_FALSE(only_dense.has_value());
  EXPECT_THAT(only_dense.error(), HasSubstr("\"expert_ids\""));

  auto mlp_post = ParseSites({"blocks.0.mlp.hook_post"}, {}, MixtureConfig());
  ASSERT_FALSE(mlp_post.has_value());
  EXPECT_THAT(mlp_post.error(), HasSubstr("mixture of experts"));

  ModelConfig dense = TwoLayerConfig();
  dense.name = "tiny", dense.model_type = "llama";
  auto dense_family = ParseSites({"router_logits"}, {0}, dense);
  ASSERT_FALSE(dense_family.has_value());
  EXPECT_THAT(dense_family.error(), HasSubstr("model_type llama"));
  EXPECT_THAT(dense_family.error(), HasSubstr("has no router"));
}

}  // namespace
}  // namespace actex
