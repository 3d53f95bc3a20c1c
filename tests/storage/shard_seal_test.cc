// A ShardWriter that seals each closed shard on a thread of its own while the next one
// fills (ShardWriterOptions::seal_in_background, as the writer actor runs it): the
// same files as sealing in turn, a listing that only ever names whole shards, and a
// disk that fills up during a seal losing nothing listed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/shard_writer_checks.h"
#include "tests/storage/temp_dir.h"

namespace actex {
namespace {

using writer_test::CheckListedShards;
using writer_test::CheckStoppedBy;
using writer_test::CountFullDisks;
using writer_test::ExpectSameShards;
using writer_test::MountTmpfsOrExit;
using writer_test::Options;
using writer_test::WriteDocuments;

// Options for 68 x 20 byte shards (one closes every two or three documents of 9
// tokens), sealed beside the next shard when `beside`.
ShardWriterOptions SmallShards(const std::string& dir, bool beside, bool gzip) {
  ShardWriterOptions options = Options(dir);
  options.shard_bytes = 68 * 20;
  options.gzip = gzip;
  options.seal_in_background = beside;
  return options;
}

TEST(ShardSeal, BesideTheNextShardTheFilesAreThoseOfSealingInTurn) {
  for (const bool gzip : {false, true}) {
    TempDir in_turn, beside;
    ASSERT_EQ(WriteDocuments(SmallShards(in_turn.path(), false, gzip), 40), "");
    ASSERT_EQ(WriteDocuments(SmallShards(beside.path(), true, gzip), 40), "");
    EXPECT_GE(ExpectSameShards(beside.path(), in_turn.path()), 12u);
    EXPECT_EQ(CheckListedShards(beside.path()).size(), 40u);
  }
}

// In a mount namespace of its own, writes into a tmpfs of `kilobytes` KiB mounted at
// `dir` until the disk is full. Exits 0 when the failure was reported as a full disk
// naming the file, nothing listed was lost and nothing half-written is left behind;
// 4 when a seal (not a spill) failed; 2 when no tmpfs could be mounted.
[[noreturn]] void FillATmpfs(const std::string& dir, int kilobytes) {
  MountTmpfsOrExit(dir, kilobytes);
  // The first site (written in place) narrow, the second (copied behind it by the
  // seal) wide: a 9-token document is 72 KiB of it, so a seal needs as many new pages
  // as its spill took. Shards of two or three documents.
  ShardWriterOptions options = SmallShards(dir, /*beside=*/true, /*gzip=*/false);
  options.sites = {{"blocks.0.hook_resid_post", 8}, {"blocks.1.hook_mlp_out", 2048}};
  options.shard_bytes = 160 << 10;
  const std::string error = WriteDocuments(options, 100000);
  CheckStoppedBy("No space left on device", dir, error);
  if (testing::Test::HasFailure()) std::_Exit(1);
  std::_Exit(error.find(".safetensors.tmp") != std::string::npos ? 4 : 0);
}

TEST(ShardSealDeathTest, ADiskFullDuringASealLosesNothingListed) {
  if (::geteuid() != 0) GTEST_SKIP() << "a mount namespace needs root (CI runs as root)";
  const int seals_failed = CountFullDisks(FillATmpfs, 256, 1024, 32, 4);
  std::printf("%d of the disks filled up during a seal\n", seals_failed);
  EXPECT_GT(seals_failed, 0) << "no disk filled up during a seal: the test missed its case";
}

}  // namespace
}  // namespace actex
