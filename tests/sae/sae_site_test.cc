// Which site an SAE may encode: its hook name or hookpoint, and its width.

#include "sae/sae_site.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sae/sae_loader.h"
#include "tests/sae/sae_fixtures.h"

namespace actex {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(SiteOfSparsifyHookpoint, ALayerIsTheResidualStreamAfterIt) {
  EXPECT_EQ(SiteOfSparsifyHookpoint("layers.5").value(), "blocks.5.hook_resid_post");
  EXPECT_EQ(SiteOfSparsifyHookpoint("layers.23").value(), "blocks.23.hook_resid_post");
  EXPECT_EQ(SiteOfSparsifyHookpoint("h.0").value(), "blocks.0.hook_resid_post");
  EXPECT_EQ(SiteOfSparsifyHookpoint("model.layers.7").value(), "blocks.7.hook_resid_post");
}

TEST(SiteOfSparsifyHookpoint, RefusesAModuleInsideALayer) {
  for (const char* hookpoint : {"layers.5.mlp", "layers.5.self_attn", "embed_tokens", "layers.x"}) {
    auto site = SiteOfSparsifyHookpoint(hookpoint);
    ASSERT_FALSE(site) << hookpoint;
    EXPECT_THAT(site.error(), HasSubstr(hookpoint));
  }
}

TEST(CheckSaeMatchesSite, AcceptsTheSiteAndWidthItWasTrainedOn) {
  for (const char* name : {"saelens-standard", "sparsify/layers.1"}) {
    auto sae = LoadSae(SaeFixture(name));
    ASSERT_TRUE(sae) << sae.error();
    EXPECT_TRUE(CheckSaeMatchesSite(*sae, "blocks.1.hook_resid_post", 64)) << name;
  }
}

TEST(CheckSaeMatchesSite, RefusesAnotherLayerNamingBothSites) {
  auto saelens = LoadSae(SaeFixture("saelens-standard"));
  ASSERT_TRUE(saelens) << saelens.error();
  auto refused = CheckSaeMatchesSite(*saelens, "blocks.12.hook_resid_post", 64);
  ASSERT_FALSE(refused);
  EXPECT_THAT(
      refused.error(),
      AllOf(HasSubstr("trained on blocks.1.hook_resid_post"), HasSubstr("metadata.hook_name"),
            HasSubstr("not on blocks.12.hook_resid_post"), HasSubstr("saelens-standard")));

  auto sparsify = LoadSae(SaeFixture("sparsify/layers.1"));
  ASSERT_TRUE(sparsify) << sparsify.error();
  refused = CheckSaeMatchesSite(*sparsify, "blocks.1.hook_mlp_out", 64);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error(), AllOf(HasSubstr("sparsify hookpoint \"layers.1\""),
                                     HasSubstr("blocks.1.hook_resid_post"),
                                     HasSubstr("not on blocks.1.hook_mlp_out")));
}

TEST(CheckSaeMatchesSite, RefusesAWidthOtherThanDIn) {
  auto sae = LoadSae(SaeFixture("saelens-jumprelu"));
  ASSERT_TRUE(sae) << sae.error();
  auto refused = CheckSaeMatchesSite(*sae, "blocks.1.hook_resid_post", 896);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error(), AllOf(HasSubstr("d_in 64"), HasSubstr("896 wide")));
}

}  // namespace
}  // namespace actex
