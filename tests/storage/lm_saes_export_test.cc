// ExportForLmSaes on an output with an integer site (expert ids): lm_saes trains on
// float activations, so an export of every site leaves the integer one out and says
// so, and asking for it is refused naming it. And a folder holding another source's
// chunks: refused, not kept as this source's rows.
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
  ASSERT_TRUE(result.has_value()) << result.error().message;
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
  EXPECT_EQ(result.error().kind, CommandError::Kind::kRefused);
  EXPECT_THAT(result.error().message, HasSubstr(std::string("site ") + kExpertIds +
                                                " is an integer site (I32 expert ids)"));
  EXPECT_FALSE(fs::exists(dir_.File("lm_saes/") + kResid));  // refused before writing
}

// An export continues past its own chunks, but a --to another source's export wrote
// (same sites, same chunk names, other rows, or chunks past this source's count) is
// refused naming a chunk, before anything is written: kept, those chunks would pass
// for this source's rows.
TEST(ExportIntoAFolderInUse, AnotherSourcesChunksAreRefusedAndLeftAsTheyWere) {
  TempDir dir;
  for (const char* name : {"first", "second"}) {
    SyntheticOutput spec{.hosts = 1, .documents = name == std::string("first") ? 10 : 12};
    spec.sites = {{kResid, 4}};
    WriteSyntheticOutput(dir.File(name), spec);
  }
  const std::string chunk = dir.File("lm_saes/") + kResid + "/chunk-00000000.safetensors";
  ASSERT_TRUE(ExportForLmSaes({dir.File("first"), dir.File("lm_saes"), {}}).has_value());
  const std::string first_bytes = ReadBytes(chunk);
  // The same source again: every chunk its own, kept.
  auto again = ExportForLmSaes({dir.File("first"), dir.File("lm_saes"), {}});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->kept, again->chunks);
  EXPECT_EQ(again->bytes, 0);
  // Another source into the same folder.
  auto other = ExportForLmSaes({dir.File("second"), dir.File("lm_saes"), {}});
  ASSERT_FALSE(other.has_value());
  EXPECT_THAT(other.error().message,
              HasSubstr("already holds " + std::string(kResid) +
                        "/chunk-00000000.safetensors, exported from " + dir.File("first")));
  EXPECT_THAT(other.error().message, HasSubstr("export into a new or empty folder"));
  EXPECT_EQ(other.error().kind, CommandError::Kind::kRefused);
  EXPECT_EQ(ReadBytes(chunk), first_bytes);
  // A chunk past the source's count (an earlier export of a longer source): lm_saes
  // would read its rows too.
  const std::string extra = dir.File("lm_saes/") + kResid + "/chunk-00000007.safetensors";
  fs::copy_file(chunk, extra);
  auto longer = ExportForLmSaes({dir.File("first"), dir.File("lm_saes"), {}});
  ASSERT_FALSE(longer.has_value());
  EXPECT_EQ(longer.error().kind, CommandError::Kind::kRefused);
  EXPECT_THAT(longer.error().message,
              HasSubstr("/chunk-00000007.safetensors, which this export does not "
                        "write (the source has 1 file)"));
}

}  // namespace
}  // namespace actex
