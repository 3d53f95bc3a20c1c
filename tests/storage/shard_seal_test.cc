// A ShardWriter that seals each closed shard on a thread of its own while the next one
// fills (ShardWriterOptions::seal_in_background, as the writer actor runs it): the
// same files as sealing in turn, a listing that only ever names whole shards, and a
// disk that fills up during a seal losing nothing listed.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/shard_writer_checks.h"
#include "tests/storage/temp_dir.h"

namespace actex {
namespace {

using writer_test::CheckListedShards;
using writer_test::kSites;
using writer_test::OpenOrDie;
using writer_test::Options;
using writer_test::ReadMetadata;

// Options for 68 x 20 byte shards (one closes every two or three documents of 9
// tokens), sealed beside the next shard when `beside`.
ShardWriterOptions SmallShards(const std::string& dir, bool beside, bool gzip) {
  ShardWriterOptions options = Options(dir);
  options.shard_bytes = 68 * 20;
  options.gzip = gzip;
  options.seal_in_background = beside;
  return options;
}

// Writes documents 0 to `documents` - 1 of 9 tokens, one chunk each; after every
// chunk end, what metadata.json lists is whole. Returns the first error.
std::string WriteDocuments(const ShardWriterOptions& options, int documents) {
  auto writer = ShardWriter::Open(options);
  if (!writer) return writer.error();
  for (int64_t doc = 0; doc < documents; ++doc) {
    if (auto added = AddWhole(**writer, MakeDocument(doc, 9, options.sites)); !added) {
      return added.error();
    }
    const std::vector<int64_t> listed = CheckListedShards(options.dir);
    for (size_t i = 0; i < listed.size(); ++i) EXPECT_EQ(listed[i], static_cast<int64_t>(i));
  }
  auto finished = (*writer)->Finish();
  return finished ? "" : finished.error();
}

TEST(ShardSeal, BesideTheNextShardTheFilesAreThoseOfSealingInTurn) {
  for (const bool gzip : {false, true}) {
    TempDir in_turn, beside;
    ASSERT_EQ(WriteDocuments(SmallShards(in_turn.path(), false, gzip), 40), "");
    ASSERT_EQ(WriteDocuments(SmallShards(beside.path(), true, gzip), 40), "");
    const nlohmann::json metadata = ReadMetadata(beside.path());
    ASSERT_GE(metadata["shards"].size(), 12u);
    EXPECT_EQ(metadata, ReadMetadata(in_turn.path())) << "sizes, CRCs, chunks, statistics";
    for (const auto& shard : metadata["shards"]) {
      const std::string name = shard["file"];
      EXPECT_EQ(ReadBytes(beside.File(name)), ReadBytes(in_turn.File(name))) << name;
    }
    EXPECT_EQ(CheckListedShards(beside.path()).size(), 40u);
  }
}

// In a mount namespace of its own, writes into a tmpfs of `kilobytes` KiB mounted at
// `dir` until the disk is full. Exits 0 when the failure was reported as a full disk
// naming the file, nothing listed was lost and nothing half-written is left behind;
// 4 when a seal (not a spill) failed; 2 when no tmpfs could be mounted.
[[noreturn]] void FillATmpfs(const std::string& dir, int kilobytes) {
  const std::string size = "size=" + std::to_string(kilobytes) + "k";
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", dir.c_str(), "tmpfs", 0, size.c_str()) != 0) {
    std::fprintf(stderr, "no tmpfs of %s at %s: %s\n", size.c_str(), dir.c_str(),
                 std::strerror(errno));
    std::_Exit(2);
  }
  // The first site (written in place) narrow, the second (copied behind it by the
  // seal) wide: a 9-token document is 72 KiB of it, so a seal needs as many new pages
  // as its spill took. Shards of two or three documents.
  ShardWriterOptions options = SmallShards(dir, /*beside=*/true, /*gzip=*/false);
  options.sites = {{"blocks.0.hook_resid_post", 8}, {"blocks.1.hook_mlp_out", 2048}};
  options.shard_bytes = 160 << 10;
  const std::string error = WriteDocuments(options, 100000);
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  EXPECT_NE(error.find(dir + "/"), std::string::npos) << error;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    EXPECT_FALSE(name.ends_with(".tmp")) << name << " left behind";
    EXPECT_EQ(name.find("spill"), std::string::npos) << name << " left behind";
  }
  EXPECT_FALSE(ReadMetadata(dir)["complete"].get<bool>());
  if (testing::Test::HasFailure()) std::_Exit(1);
  std::_Exit(error.find(".safetensors.tmp") != std::string::npos ? 4 : 0);
}

TEST(ShardSealDeathTest, ADiskFullDuringASealLosesNothingListed) {
  if (::geteuid() != 0) GTEST_SKIP() << "a mount namespace needs root (CI runs as root)";
  int seals_failed = 0;
  for (int kilobytes = 256; kilobytes <= 1024; kilobytes += 32) {
    TempDir dir;
    const auto reported = [&seals_failed](int status) {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      seals_failed += code == 4;
      return code == 0 || code == 4;
    };
    EXPECT_EXIT(FillATmpfs(dir.path(), kilobytes), reported, "") << kilobytes << " KiB";
  }
  std::printf("%d of the disks filled up during a seal\n", seals_failed);
  EXPECT_GT(seals_failed, 0) << "no disk filled up during a seal: the test missed its case";
}

}  // namespace
}  // namespace actex
