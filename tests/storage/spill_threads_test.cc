// A ShardWriter that rounds and spills a document's sites on several threads
// (ShardWriterOptions::spill_threads, as the writer actor of --device cuda runs it):
// the same files as one thread, and a disk that fills up under a spilling thread
// losing nothing listed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/shard_writer_checks.h"
#include "tests/storage/temp_dir.h"

namespace actex {
namespace {

using writer_test::CheckListedShards;
using writer_test::CheckStoppedByAFullDisk;
using writer_test::MountTmpfsOrExit;
using writer_test::Options;
using writer_test::ReadMetadata;
using writer_test::WriteDocuments;

// Sites of different widths and kinds: a document of 48 tokens has 89,376 values,
// enough for the writer to spill it on its threads (and not only on its own).
const std::vector<StoredSite> kMixedSites = {
    {"blocks.0.hook_resid_post", 640},
    {"blocks.1.mlp.hook_expert_indices", 2, /*integer=*/true},
    {"blocks.1.hook_mlp_out", 1024},
    {"blocks.2.hook_attn_out", 96, false, /*statistics_only=*/true},
    {"blocks.3.hook_resid_post", 100}};
constexpr int kTokens = 48;

ShardWriterOptions MixedSites(const std::string& dir, int spill_threads, OutputDtype dtype,
                              bool gzip) {
  ShardWriterOptions options = Options(dir);
  options.sites = kMixedSites;
  options.dtype = dtype;
  options.gzip = gzip;
  options.shard_bytes = 400 << 10;  // a shard of three or four documents in bf16
  options.seal_in_background = true;
  options.spill_threads = spill_threads;
  return options;
}

TEST(SpillThreads, SitesSpilledOnSeveralThreadsMakeTheFilesOfOne) {
  for (const OutputDtype dtype : {OutputDtype::kBF16, OutputDtype::kF32}) {
    for (const bool gzip : {false, true}) {
      TempDir one, several;
      ASSERT_EQ(WriteDocuments(MixedSites(one.path(), 1, dtype, gzip), 20, kTokens), "");
      ASSERT_EQ(WriteDocuments(MixedSites(several.path(), 8, dtype, gzip), 20, kTokens), "");
      const nlohmann::json metadata = ReadMetadata(several.path());
      ASSERT_GE(metadata["shards"].size(), 3u);
      EXPECT_EQ(metadata, ReadMetadata(one.path())) << "sizes, CRCs, chunks, statistics";
      for (const auto& shard : metadata["shards"]) {
        const std::string name = shard["file"];
        EXPECT_EQ(ReadBytes(several.File(name)), ReadBytes(one.File(name))) << name;
      }
      EXPECT_EQ(CheckListedShards(several.path()).size(), 20u);
    }
  }
}

// In a mount namespace of its own, writes three equal sites, each on a thread of its
// own, into a tmpfs of `kilobytes` KiB at `dir` until the disk is full. Exits 0 when
// that was reported naming the file, with nothing listed lost or half-written left; 5
// when a write to the spill of a site another thread spills failed (not the writer's
// own: its first site, written in place, or its id tensors; nor a seal's copy of
// them); 2 when no tmpfs could be mounted.
[[noreturn]] void FillATmpfs(const std::string& dir, int kilobytes) {
  MountTmpfsOrExit(dir, kilobytes);
  ShardWriterOptions options = MixedSites(dir, 3, OutputDtype::kBF16, false);
  options.sites = {{"blocks.0.hook_resid_post", 1024},
                   {"blocks.1.hook_resid_post", 1024},
                   {"blocks.2.hook_resid_post", 1024}};
  const std::string error = WriteDocuments(options, 100000, 24);
  CheckStoppedByAFullDisk(dir, error);
  if (testing::Test::HasFailure()) std::_Exit(1);
  const bool spill_thread = error.find("cannot write " + dir + "/.shard_") != std::string::npos &&
                            (error.find(".spill.1:") != std::string::npos ||
                             error.find(".spill.2:") != std::string::npos);
  std::_Exit(spill_thread ? 5 : 0);
}

TEST(SpillThreadsDeathTest, ADiskFullUnderASpillingThreadLosesNothingListed) {
  if (::geteuid() != 0) GTEST_SKIP() << "a mount namespace needs root (CI runs as root)";
  int on_spill_threads = 0;
  for (int kilobytes = 1024; kilobytes <= 2560; kilobytes += 32) {
    TempDir dir;
    const auto reported = [&on_spill_threads](int status) {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      on_spill_threads += code == 5;
      return code == 0 || code == 5;
    };
    EXPECT_EXIT(FillATmpfs(dir.path(), kilobytes), reported, "") << kilobytes << " KiB";
  }
  std::printf("%d of the disks filled up under a spilling thread\n", on_spill_threads);
  EXPECT_GT(on_spill_threads, 0) << "no disk filled up under a spilling thread: the test missed "
                                    "its case";
}

}  // namespace
}  // namespace actex
