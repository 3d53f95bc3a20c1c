// SetAsideUnlisted on a folder written by ShardWriter: temporary files (*.tmp, a
// killed writer's spill file) go, every
// shard metadata.json does not list is moved into unlisted/ byte for byte, whole or
// not, and nothing listed is touched.
#include "storage/unlisted_shards.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "storage/host_folder_files.h"
#include "storage/output_lock.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string Slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(UnlistedShards, AreSetAsideByteForByteAndTemporaryFilesRemoved) {
  TempDir dir;
  SyntheticOutput spec;
  spec.hosts = 1;
  spec.documents = 6;
  spec.shard_bytes = 1;
  WriteSyntheticOutput(dir.path(), spec);
  const std::string host = dir.path() + "/host_00";
  const std::string whole = Slurp(host + "/shard_000002.safetensors");
  fs::copy_file(host + "/shard_000002.safetensors", host + "/shard_000007.safetensors");
  WriteBytes(host + "/shard_000008.safetensors", whole.substr(0, whole.size() - 3));
  WriteBytes(host + "/shard_000009.safetensors.tmp", "partial");
  // A writer killed between creating a spill file and unlinking it leaves one.
  WriteBytes(host + "/" + SpillFileName(48, 2), "rows");
  // Listed: every shard but shard_000002 (its entry lost) and the two above.
  std::set<std::string> listed;
  for (int n = 1; n <= 6; ++n) {
    if (n != 2) listed.insert("shard_00000" + std::to_string(n) + ".safetensors");
  }

  EXPECT_EQ(DescribeShardFile(host + "/shard_000002.safetensors"),
            "whole (its header and size agree)");
  EXPECT_THAT(DescribeShardFile(host + "/shard_000008.safetensors"), HasSubstr("not whole"));
  auto cleanup = SetAsideUnlisted(host, listed);
  ASSERT_TRUE(cleanup.has_value()) << cleanup.error();
  EXPECT_THAT(cleanup->removed_tmp,
              UnorderedElementsAre(".shard_48.spill.2", "shard_000009.safetensors.tmp"));
  EXPECT_THAT(cleanup->set_aside, ElementsAre(host + "/unlisted/shard_000002.safetensors",
                                              host + "/unlisted/shard_000007.safetensors",
                                              host + "/unlisted/shard_000008.safetensors"));
  EXPECT_EQ(Slurp(host + "/unlisted/shard_000002.safetensors"), whole);
  EXPECT_EQ(Slurp(host + "/unlisted/shard_000008.safetensors").size(), whole.size() - 3);
  EXPECT_FALSE(fs::exists(host + "/shard_000002.safetensors"));
  EXPECT_FALSE(fs::exists(host + "/shard_000009.safetensors.tmp"));
  EXPECT_FALSE(fs::exists(host + "/.shard_48.spill.2"));
  for (const std::string& name : listed) EXPECT_TRUE(fs::exists(host + "/" + name)) << name;

  // Set aside again under the same name: the first copy stays.
  fs::copy_file(host + "/shard_000001.safetensors", host + "/shard_000002.safetensors");
  cleanup = SetAsideUnlisted(host, listed);
  ASSERT_TRUE(cleanup.has_value()) << cleanup.error();
  EXPECT_THAT(cleanup->set_aside, ElementsAre(host + "/unlisted/2_shard_000002.safetensors"));
  EXPECT_EQ(Slurp(host + "/unlisted/shard_000002.safetensors"), whole);
}

TEST(OutputLock, ASecondHolderIsRefusedNamingTheFirstUntilItLetsGo) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  {
    auto first = OutputLock::Acquire(out, "host_00");
    ASSERT_TRUE(first.has_value()) << first.error().message;
    EXPECT_THAT(Slurp(out + "/.host_00.lock"),
                HasSubstr("pid " + std::to_string(::getpid()) + " on host "));
    auto second = OutputLock::Acquire(out, "host_00");
    ASSERT_FALSE(second.has_value());
    EXPECT_EQ(second.error().kind, OutputLock::Refusal::kHeld);
    EXPECT_THAT(second.error().message,
                HasSubstr("being written by another actex run (pid " + std::to_string(::getpid())));
    // Another host folder of the same output is another lock.
    EXPECT_TRUE(OutputLock::Acquire(out, "host_01").has_value());
  }
  // Released with its holder; the file it leaves does not block.
  EXPECT_TRUE(fs::exists(out + "/.host_00.lock"));
  EXPECT_TRUE(OutputLock::Acquire(out, "host_00").has_value());
}

}  // namespace
}  // namespace actex
