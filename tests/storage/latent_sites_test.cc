// The rules a token's stored latents obey (storage/latent_sites.h), each broken once,
// and the metadata.json record of an SAE read back.

#include "storage/latent_sites.h"

#include <gtest/gtest.h>

#include "storage/sae_record.h"

namespace actex {
namespace {

constexpr int64_t kSiteLatents = 100;

TEST(LatentSites, NamesAndStoredSitesFollowTheSite) {
  const std::vector<StoredSite> sites = StoredLatentSites("blocks.5.hook_resid_post", 16);
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(sites[0], (StoredSite{"blocks.5.hook_resid_post.latents.ids", 16, true}));
  EXPECT_EQ(sites[1], (StoredSite{"blocks.5.hook_resid_post.latents.values", 16, false}));
  EXPECT_EQ(sites[2], (StoredSite{"blocks.5.hook_resid_post.latents.count", 1, true}));
}

TEST(LatentSites, RowsThatObeyTheRulesPass) {
  EXPECT_EQ(CheckLatentRow(std::vector<int32_t>{7, 3, -1, -1}, std::vector<float>{2, 1, 0, 0}, 2,
                           kSiteLatents),
            "");
  // More fired than K: all K used, the count says how many.
  EXPECT_EQ(CheckLatentRow(std::vector<int32_t>{7, 3}, std::vector<float>{2, 2}, 9, kSiteLatents),
            "");
  EXPECT_EQ(CheckLatentRow(std::vector<int32_t>{-1, -1}, std::vector<float>{0, 0}, 0, kSiteLatents),
            "");
}

struct BadRow {
  std::vector<int32_t> ids;
  std::vector<float> values;
  int32_t count;
  std::string fault;
};

class LatentRowFaults : public ::testing::TestWithParam<BadRow> {};

TEST_P(LatentRowFaults, AreNamed) {
  const BadRow& row = GetParam();
  EXPECT_EQ(CheckLatentRow(row.ids, row.values, row.count, kSiteLatents), row.fault);
}

INSTANTIATE_TEST_SUITE_P(
    EachRule, LatentRowFaults,
    ::testing::Values(
        BadRow{{7, 100}, {2, 1}, 2, "entry 1: id 100 is outside [0, 100)"},
        BadRow{{7, -5}, {2, 1}, 2, "entry 1: id -5 is outside [0, 100)"},
        BadRow{{-1, 7}, {0, 1}, 1, "entry 1: id 7 after the padding (-1) of entry 0"},
        BadRow{{7, -1}, {2, 0.5f}, 1, "entry 1: padding (-1) with value 0.500000, expected 0"},
        BadRow{{7, 3},
               {1, 2},
               2,
               "entry 1: value 2.000000 above the 1.000000 before it (values must descend)"},
        BadRow{{7, 3}, {2, 1}, -1, "count is -1, below 0"},
        BadRow{{7, -1}, {2, 0}, 2, "count is 2 but 1 entries are latents"},
        BadRow{{7, -1}, {2, 0}, 5, "count is 5, above K 2, but only 1 entries are latents"}));

TEST(SaeRecord, ReadsBackWhatItWrote) {
  const SaeRecord record{"blocks.1.hook_resid_post",
                         "/s",
                         "SAELens",
                         "topk",
                         64,
                         256,
                         16,
                         {{"cfg.json", "ab"}, {"sae_weights.safetensors", "cd"}}};
  const nlohmann::json config = {{kSaesConfigKey, {SaeRecordJson(record)}}};
  auto read = ReadSaeRecords(config, JsonPlace{"m.json", "config"});
  ASSERT_TRUE(read) << read.error();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->front(), record);
  EXPECT_TRUE(ReadSaeRecords(nlohmann::json::object(), JsonPlace{})->empty());
}

TEST(SaeRecord, DescribedWithItsFolderWhenItHasOne) {
  SaeRecord record{"blocks.1.hook_resid_post",        "/s", "SAELens", "topk", 64, 256, 16,
                   {{"cfg.json", "0123456789abcdef"}}};
  EXPECT_EQ(DescribeSaeRecord(record),
            "blocks.1.hook_resid_post: SAELens topk 64 -> 256, K 16, /s (cfg.json 0123456789ab)");
  record.dir.clear();
  EXPECT_EQ(DescribeSaeRecord(record),
            "blocks.1.hook_resid_post: SAELens topk 64 -> 256, K 16 (cfg.json 0123456789ab)");
}

TEST(SaeRecord, ADamagedRecordIsRefusedNamingTheField) {
  nlohmann::json entry = SaeRecordJson({"s", "/s", "SAELens", "relu", 64, 256, 8, {}});
  entry["d_sae"] = "many";
  auto read = ReadSaeRecords({{kSaesConfigKey, {entry}}}, JsonPlace{"m.json", "config"});
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().find("m.json: config.saes[0].d_sae"), std::string::npos) << read.error();
}

}  // namespace
}  // namespace actex
