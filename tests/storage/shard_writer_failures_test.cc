// What ShardWriter does when things go wrong: inconsistent documents and bad options
// are refused, a failed write leaves every listed shard valid, and without
// /proc/self/fd (a container without /proc) the shards are copied to the same bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "storage/shard_listing.h"
#include "storage/shard_spill.h"
#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/shard_writer_checks.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

using writer_test::CheckListedShards;
using writer_test::ChunksOf;
using writer_test::kWriterSites;
using writer_test::OpenOrDie;
using writer_test::Options;

// Writes 12 documents of 9 tokens in 68 x 20 byte shards to `dir` (4 shards).
void WriteTwelveDocuments(const std::string& dir) {
  ShardWriterOptions options = Options(dir);
  options.shard_bytes = 68 * 20;
  auto writer = OpenOrDie(options);
  for (int64_t doc = 0; doc < 12; ++doc)
    ASSERT_TRUE(AddWhole(*writer, MakeDocument(doc, 9, kWriterSites)));
  ASSERT_TRUE(writer->Finish().has_value());
}

// A process whose /proc is an empty mount (a container without /proc), so that
// /proc/self/fd cannot name an O_TMPFILE file: the writer then spills every tensor and
// copies it into the shard, to the same bytes as in place. Exits 0 when it wrote
// `dir`, 2 when no such process could be made, 3 when the spill stayed in place.
[[noreturn]] void WriteWithoutProcSelfFd(const std::string& dir) {
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/proc", "tmpfs", 0, nullptr) != 0) {
    std::fprintf(stderr, "no mount namespace without /proc: %s\n", std::strerror(errno));
    std::_Exit(2);
  }
  auto spill = ShardSpill::CreateInPlace(dir, 0, 1, 0, 16, nullptr);
  if (!spill || spill->in_place()) std::_Exit(3);
  WriteTwelveDocuments(dir);
  std::_Exit(testing::Test::HasFailure() ? 1 : 0);
}

TEST(ShardWriterDeathTest, WithoutProcSelfFdTheShardsAreCopiedToTheSameBytes) {
  if (::geteuid() != 0) GTEST_SKIP() << "a mount namespace needs root (CI runs as root)";
  TempDir in_place, copied;
  WriteTwelveDocuments(in_place.path());
  EXPECT_EXIT(WriteWithoutProcSelfFd(copied.path()), testing::ExitedWithCode(0), "");
  const nlohmann::json metadata = ReadMetadata(copied.path());
  ASSERT_EQ(metadata["shards"].size(), 4u);
  EXPECT_EQ(metadata["shards"], ReadMetadata(in_place.path())["shards"]) << "sizes and CRCs";
  for (const auto& shard : metadata["shards"]) {
    const std::string name = shard["file"];
    EXPECT_EQ(ReadBytes(copied.File(name)), ReadBytes(in_place.File(name))) << name;
  }
  EXPECT_EQ(CheckListedShards(copied.path()).size(), 12u);
}

TEST(ShardWriter, RejectsInconsistentDocuments) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(10, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(5, 2, kWriterSites).View()));
  auto same_id = writer->Add(MakeDocument(5, 2, kWriterSites).View());
  ASSERT_FALSE(same_id.has_value());
  EXPECT_THAT(same_id.error(), HasSubstr("doc ids must increase strictly"));

  OwnedDocument document = MakeDocument(6, 3, kWriterSites);
  document.positions.pop_back();
  auto positions = writer->Add(document.View());
  ASSERT_FALSE(positions.has_value());
  EXPECT_THAT(positions.error(), HasSubstr("3 token ids but 2 positions"));

  document = MakeDocument(6, 3, kWriterSites);
  document.sites[1].pop_back();
  auto width = writer->Add(document.View());
  ASSERT_FALSE(width.has_value());
  EXPECT_THAT(width.error(), HasSubstr("site \"blocks.1.hook_mlp_out\" has 14 values"));

  document = MakeDocument(6, 3, kWriterSites);
  document.sites.pop_back();
  EXPECT_FALSE(writer->Add(document.View()).has_value());

  auto empty = writer->Add(MakeDocument(6, 0, kWriterSites).View());
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error(), HasSubstr("document 6: has no tokens"));

  // A refused document changes nothing: the writer goes on.
  ASSERT_TRUE(writer->Add(MakeDocument(6, 3, kWriterSites).View()));
  ASSERT_TRUE(writer->EndChunk(0, 10));
  ASSERT_TRUE(writer->Finish().has_value());
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{5, 6}));
}

TEST(ShardWriter, RejectsBadOptionsAndEarlierRun) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.File("out"));
  options.sites.push_back({"token_ids", 3});
  EXPECT_FALSE(ShardWriter::Open(options).has_value());
  options = Options(dir.File("out"));
  options.sites.push_back(kWriterSites[0]);
  EXPECT_FALSE(ShardWriter::Open(options).has_value());
  options = Options(dir.File("out"));
  options.sites[0].width = 0;
  EXPECT_FALSE(ShardWriter::Open(options).has_value());
  options = Options(dir.File("out"));
  options.shard_bytes = 0;
  EXPECT_FALSE(ShardWriter::Open(options).has_value());

  ASSERT_NE(OpenOrDie(Options(dir.File("out/host_00"))), nullptr);  // creates the directories
  auto again = ShardWriter::Open(Options(dir.File("out/host_00")));
  ASSERT_FALSE(again.has_value());
  EXPECT_THAT(again.error(), HasSubstr(dir.File("out/host_00/metadata.json") + " already exists"));
}

// Runs the same documents with a write failure injected after every `step` bytes,
// and after each failure checks what a reader would see.
TEST(ShardWriter, WriteErrorLeavesListedShardsValid) {
  std::set<std::string> failed_files;
  int failures = 0;
  for (bool gzip : {false, true}) {
    for (int64_t fail_after = 0;; fail_after += 331) {
      TempDir dir;
      ShardWriterOptions options = Options(dir.path());
      options.shard_bytes = 68 * 12;
      options.gzip = gzip;
      options.dtype = OutputDtype::kF16;
      options.fail_after_bytes = fail_after;
      std::string error;
      auto writer = ShardWriter::Open(options);
      if (!writer.has_value()) {
        error = writer.error();
      } else {
        for (int64_t doc = 0; doc < 10 && error.empty(); ++doc) {
          if (auto added = AddWhole(**writer, MakeDocument(doc, 5, kWriterSites)); !added) {
            error = added.error();
          }
        }
        if (auto finished = (*writer)->Finish(); error.empty() && !finished) {
          error = finished.error();
        }
      }
      if (error.empty()) break;  // the budget was enough for the whole run
      ++failures;
      EXPECT_THAT(error, HasSubstr("No space left on device"));
      EXPECT_THAT(error, HasSubstr(dir.path() + "/"));
      failed_files.insert(
          error.substr(error.rfind('/') + 1, error.rfind(':') - error.rfind('/') - 1));
      if (writer.has_value()) {
        auto after = (*writer)->Add(MakeDocument(100, 1, kWriterSites).View());
        ASSERT_FALSE(after.has_value());
        EXPECT_THAT(after.error(), HasSubstr("earlier error"));
        writer->reset();  // what a failing pipeline does next
      }
      for (const auto& name : DirectoryEntries(dir.path())) {
        EXPECT_FALSE(name.ends_with(".tmp")) << name << " left behind";
        EXPECT_THAT(name, ::testing::Not(HasSubstr("spill"))) << name << " left behind";
      }
      if (!std::filesystem::exists(dir.File("metadata.json"))) {
        EXPECT_FALSE(writer.has_value()) << "metadata.json vanished after Open";
        continue;
      }
      const std::vector<int64_t> docs = CheckListedShards(dir.path());
      for (size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(docs[i], static_cast<int64_t>(i));
      EXPECT_EQ(ReadMetadata(dir.path())["complete"], false);
    }
  }
  EXPECT_GT(failures, 20);
  std::printf("injected %d write failures\n", failures);
  // Failures were met while spilling, while assembling a shard and in metadata.json.
  EXPECT_THAT(failed_files, ::testing::Contains(HasSubstr(".spill.")));
  EXPECT_THAT(failed_files, ::testing::Contains(HasSubstr(".safetensors.tmp")));
  EXPECT_THAT(failed_files, ::testing::Contains(HasSubstr(".safetensors.gz.tmp")));
  EXPECT_THAT(failed_files, ::testing::Contains("metadata.json.tmp"));
}

}  // namespace
}  // namespace actex
