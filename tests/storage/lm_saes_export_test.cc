// ExportForLmSaes on an output with an integer site (expert ids): lm_saes trains on
// float activations, so an export of every site leaves the integer one out and says
// so, and asking for it is refused naming it.
#include "storage/lm_saes_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "storage/safetensors.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kResid = "blocks.0.hook_resid_post";
constexpr const char* kExpertIds = "blocks.0.mlp.hook_expert_indices";

class ExportOfAnIntegerSite : public testing::Test {
 protected:
  void SetUp() override {
    SyntheticOutput spec{.hosts = 1, .documents = 10};
    spec.sites = {{kResid, 4}, {kExpertIds, 2, true}};
    WriteSyntheticOutput(dir_.File("out"), spec);
  }
  LmSaesExportOptions Options(std::vector<std::string> sites) const {
    return {dir_.File("out"), dir_.File("lm_saes"), std::move(sites)};
  }
  TempDir dir_;
};

TEST_F(ExportOfAnIntegerSite, EverySiteMeansEveryFloatSiteAndTheIntegerOneIsNamed) {
  auto result = ExportForLmSaes(Options({}));
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_THAT(result->integer_sites_left_out, ElementsAre(kExpertIds));
  EXPECT_TRUE(fs::exists(dir_.File("lm_saes/") + kResid + "/chunk-00000000.safetensors"));
  EXPECT_FALSE(fs::exists(dir_.File("lm_saes/") + kExpertIds));
  auto chunk =
      SafetensorsFile::Open(dir_.File("lm_saes/") + kResid + "/chunk-00000000.safetensors");
  ASSERT_TRUE(chunk.has_value()) << chunk.error();
  EXPECT_EQ((*chunk)->tensors().at("activation").dtype, "BF16");
}

TEST_F(ExportOfAnIntegerSite, AskingForTheIntegerSiteIsRefusedNamingIt) {
  auto result = ExportForLmSaes(Options({kResid, kExpertIds}));
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr(std::string("site ") + kExpertIds +
                                        " is an integer site (I32 expert ids)"));
  EXPECT_FALSE(fs::exists(dir_.File("lm_saes/") + kResid));  // refused before writing
}

}  // namespace
}  // namespace actex
