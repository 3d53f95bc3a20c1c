// CheckShard (through ReadOutputFolder, as actex verify reads a folder) on an output
// with an integer site: its I32 tensor is accepted in a bfloat16 output, and a
// tensor whose dtype is not the one metadata.json gives its site is named.
#include "storage/shard_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "storage/output_folder.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kExpertIds = "blocks.0.mlp.hook_expert_indices";

class IntegerSiteShards : public testing::Test {
 protected:
  void SetUp() override {
    spec_.hosts = 1;
    spec_.documents = 20;
    spec_.sites = {{"blocks.0.hook_resid_post", 8}, {kExpertIds, 2, true}};
    WriteSyntheticOutput(dir_.path(), spec_);
  }
  std::string host() const { return dir_.File("host_00"); }

  // Every fault CheckShard finds over the folder's shards, after `edit` changed its
  // metadata.json; the folder itself must read without a fault.
  std::vector<std::string> ShardFaults(const std::function<void(nlohmann::json&)>& edit =
                                           [](nlohmann::json&) {}) {
    nlohmann::json metadata = nlohmann::json::parse(ReadBytes(host() + "/metadata.json"));
    edit(metadata);
    WriteBytes(host() + "/metadata.json", metadata.dump());
    std::vector<VerifyFinding> folder_faults;
    auto folder = ReadOutputFolder(host(), "host_00", &folder_faults);
    EXPECT_TRUE(folder.has_value());
    for (const VerifyFinding& fault : folder_faults) ADD_FAILURE() << fault.problem;
    std::vector<std::string> faults;
    if (!folder) return faults;
    EXPECT_FALSE(folder->shards.empty());
    for (const ShardEntry& shard : folder->shards) {
      const ShardCheck check = CheckShard(shard);
      faults.insert(faults.end(), check.faults.begin(), check.faults.end());
    }
    return faults;
  }

  TempDir dir_;
  SyntheticOutput spec_;
};

TEST_F(IntegerSiteShards, AnI32SiteInABfloat16OutputIsAcceptedWithoutStatistics) {
  EXPECT_THAT(ShardFaults(), IsEmpty());
}

TEST_F(IntegerSiteShards, AnIntegerSiteListedAsFloatIsNamedWithTheDtypeFound) {
  const auto faults = ShardFaults([](nlohmann::json& metadata) {
    metadata["sites"][1].erase("dtype");
    metadata["statistics"] = nullptr;  // unknown: a float site would need its own
  });
  ASSERT_FALSE(faults.empty());
  EXPECT_THAT(faults[0], HasSubstr(std::string("tensor \"") + kExpertIds +
                                   "\" is I32, expected BF16 (metadata.json dtype)"));
}

TEST_F(IntegerSiteShards, AFloatTensorWhereMetadataSaysI32IsNamed) {
  const auto faults =
      ShardFaults([](nlohmann::json& metadata) { metadata["sites"][0]["dtype"] = "I32"; });
  ASSERT_FALSE(faults.empty());
  EXPECT_THAT(faults[0], HasSubstr("tensor \"blocks.0.hook_resid_post\" is BF16, expected I32 (an "
                                   "integer site in metadata.json)"));
}

}  // namespace
}  // namespace actex
