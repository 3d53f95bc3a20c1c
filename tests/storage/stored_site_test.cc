// A site's metadata.json "sites" entry: written and read back, an older output's
// entry (no dtype) read as a float site, and a damaged entry refused naming where.
#include "storage/stored_site.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace actex {
namespace {

using ::testing::HasSubstr;

const JsonPlace kPlace{"OUT/host_00/metadata.json", "sites[1]"};

TEST(StoredSite, EntriesReadBackAsWrittenAndOnlyIntegerSitesSayTheirDtype) {
  const StoredSite resid{"blocks.0.hook_resid_post", 896};
  const StoredSite ids{"blocks.0.mlp.hook_expert_indices", 8, true};
  EXPECT_EQ(nlohmann::json(StoredSiteJson(resid)).dump(),
            R"({"name":"blocks.0.hook_resid_post","width":896})");
  EXPECT_EQ(StoredSiteJson(ids)["dtype"], "I32");
  EXPECT_EQ(ReadStoredSite(nlohmann::json(StoredSiteJson(resid)), kPlace), resid);
  EXPECT_EQ(ReadStoredSite(nlohmann::json(StoredSiteJson(ids)), kPlace), ids);
  EXPECT_EQ(resid.Dtype("BF16"), "BF16");
  EXPECT_EQ(ids.Dtype("BF16"), "I32");
}

TEST(StoredSite, DamagedEntriesAreRefusedNamingTheField) {
  auto dtype = ReadStoredSite({{"name", "x"}, {"width", 2}, {"dtype", "F16"}}, kPlace);
  ASSERT_FALSE(dtype.has_value());
  EXPECT_THAT(dtype.error(), HasSubstr("sites[1].dtype is \"F16\", expected \"I32\""));
  auto width = ReadStoredSite({{"name", "x"}, {"width", 0}}, kPlace);
  ASSERT_FALSE(width.has_value());
  EXPECT_THAT(width.error(), HasSubstr("sites[1].width"));
  auto name = ReadStoredSite({{"width", 2}}, kPlace);
  ASSERT_FALSE(name.has_value());
  EXPECT_THAT(name.error(), HasSubstr("sites[1].name"));
}

}  // namespace
}  // namespace actex
