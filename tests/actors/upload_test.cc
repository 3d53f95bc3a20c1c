// --upload-cmd: every shard, rejects.jsonl and metadata.json reach the remote; local
// copies go only after a successful upload; failures are kept, reported and
// uploaded by a rerun, also after kill -9 at any moment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "actex_process.h"
#include "actors/extract_flag_table.h"
#include "extraction_reader.h"
#include "run_support.h"
#include "storage/upload_ledger.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using ::testing::HasSubstr;

// A "remote" that is a local folder: mkdir + cp, after `before` (shell) ran.
std::string CopyCommand(const std::string& remote, const std::string& before = "") {
  return before + "mkdir -p " + remote + "/{host_dir} && cp {path} " + remote +
         "/{host_dir}/{name}";
}

std::vector<std::string> ShardFiles(const std::string& host_dir) {
  std::vector<std::string> shards;
  for (const auto& entry : fs::directory_iterator(host_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("shard_")) shards.push_back(name);
  }
  return shards;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A remote metadata.json (uploaded whenever no shard waits) never lists a shard the
// remote lacks.
void ExpectRemoteListsOnlyWhatItHolds(const std::string& remote_host) {
  if (!fs::exists(remote_host + "/metadata.json")) return;
  const auto metadata = nlohmann::json::parse(ReadFile(remote_host + "/metadata.json"));
  for (const auto& shard : metadata["shards"]) {
    const fs::path path = fs::path(remote_host) / shard["file"].get<std::string>();
    ASSERT_TRUE(fs::exists(path)) << path;
    EXPECT_EQ(static_cast<int64_t>(fs::file_size(path)), shard["bytes"].get<int64_t>()) << path;
  }
}

int Verify(const TempDir& dir, const std::string& out, const std::string& corpus,
           std::string* output) {
  ActexProcess verify(dir.path() + "/verify", {"verify", out, "--data", corpus});
  const int code = verify.Wait(seconds(60));
  *output = verify.out() + verify.err();
  return code;
}

struct UploadRun {
  TempDir dir;
  std::string corpus;
  ExtractOptions reference, uploading;
  std::string remote;

  explicit UploadRun(int documents) {
    corpus = dir.Write("corpus.jsonl", Corpus(documents));
    reference = SmallShardOptions(corpus, dir.path() + "/reference");
    uploading = SmallShardOptions(corpus, dir.path() + "/out");
    remote = dir.path() + "/remote";
    uploading.upload.command = CopyCommand(remote);
    uploading.upload.backoff_seconds = 0.05;
  }

  void RunReference() {
    const auto start = std::chrono::steady_clock::now();
    ActexProcess run(dir.path() + "/reference", ExtractArgs(reference));
    ASSERT_EQ(run.Wait(seconds(120)), 0) << run.err();
    reference_time = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
  }
  std::chrono::milliseconds reference_time{0};  // how long RunReference took
};

TEST(Upload, ShardsRejectsAndMetadataReachTheRemoteAndLocalShardsGoAfterwards) {
  UploadRun run(300);
  run.RunReference();
  run.uploading.upload.delete_after_upload = true;
  ActexProcess extract(run.dir.path() + "/run", ExtractArgs(run.uploading));
  ASSERT_EQ(extract.Wait(seconds(120)), 0) << extract.err();

  ExpectIdentical(run.remote, run.reference.out_dir);
  const std::string host = run.uploading.out_dir + "/host_00";
  EXPECT_THAT(ShardFiles(host), testing::IsEmpty());
  EXPECT_EQ(ReadFile(host + "/metadata.json"), ReadFile(run.remote + "/host_00/metadata.json"));
  EXPECT_EQ(ReadFile(host + "/rejects.jsonl"), ReadFile(run.remote + "/host_00/rejects.jsonl"));
  auto missing = FilesNotUploaded(host);
  ASSERT_TRUE(missing.has_value()) << missing.error();
  EXPECT_THAT(*missing, testing::IsEmpty());
  std::string report;
  EXPECT_EQ(Verify(run.dir, run.remote, run.corpus, &report), 0) << report;
  // The local folder still verifies: its ledger vouches for every deleted shard.
  EXPECT_EQ(Verify(run.dir, run.uploading.out_dir, run.corpus, &report), 0) << report;
  EXPECT_THAT(report, HasSubstr("uploaded and deleted locally"));
}

TEST(Upload, AFailingCommandIsRetriedWithBackoffUntilItSucceeds) {
  UploadRun run(120);
  run.uploading.shard_bytes = 256 << 10;
  // Each file's first two attempts fail.
  const std::string tries = run.dir.path() + "/tries";
  fs::create_directories(tries);
  run.uploading.upload.command = CopyCommand(
      run.remote, "n=$(cat " + tries + "/{name} 2>/dev/null || echo 0); echo $((n+1)) > " + tries +
                      "/{name}; if [ $n -lt 2 ]; then echo 'ServiceUnavailable: try later' >&2; "
                      "exit 1; fi; ");
  run.uploading.upload.retries = 2;
  ActexProcess extract(run.dir.path() + "/run", ExtractArgs(run.uploading));
  ASSERT_EQ(extract.Wait(seconds(120)), 0) << extract.err();
  EXPECT_THAT(extract.err(), HasSubstr("ServiceUnavailable: try later); retrying in"));
  int files = 0;
  for (const auto& entry : fs::directory_iterator(tries)) {
    EXPECT_EQ(ReadFile(entry.path()), "3\n") << entry.path();
    ++files;
  }
  const size_t shards = ShardFiles(run.uploading.out_dir + "/host_00").size();
  EXPECT_GE(files, static_cast<int>(shards) + 2);  // every shard, rejects, metadata
  std::string report;
  EXPECT_EQ(Verify(run.dir, run.remote, run.corpus, &report), 0) << report;
}

TEST(Upload, AFileThatKeepsFailingIsKeptAndReportedAndARerunUploadsIt) {
  UploadRun run(300);
  run.RunReference();
  ExtractOptions failing = run.uploading;
  failing.upload.delete_after_upload = true;
  failing.upload.retries = 1;
  failing.upload.command =
      "case {name} in shard_000002*) echo 'AccessDenied: no write' >&2; exit 1;; esac; " +
      CopyCommand(run.remote);
  ActexProcess first(run.dir.path() + "/first", ExtractArgs(failing));
  EXPECT_NE(first.Wait(seconds(120)), 0);
  EXPECT_THAT(first.err(), HasSubstr("shard_000002.safetensors: upload failed 2 time(s), kept "
                                     "here: exit status 1: AccessDenied: no write"));
  EXPECT_THAT(first.err(), HasSubstr("not uploaded (shard_000002.safetensors, metadata.json)"));
  const std::string host = failing.out_dir + "/host_00";
  EXPECT_THAT(ShardFiles(host), testing::ElementsAre("shard_000002.safetensors"));
  ExpectRemoteListsOnlyWhatItHolds(run.remote + "/host_00");

  ExtractOptions fixed = failing;
  fixed.upload.command = CopyCommand(run.remote);
  ActexProcess rerun(run.dir.path() + "/rerun", ExtractArgs(fixed));
  ASSERT_EQ(rerun.Wait(seconds(120)), 0) << rerun.err();
  EXPECT_THAT(rerun.err(), HasSubstr("already complete"));
  EXPECT_THAT(ShardFiles(host), testing::IsEmpty());
  ExpectIdentical(run.remote, run.reference.out_dir);
}

TEST(Upload, KilledAnywhereAndRerunLeavesTheRemoteEqualToAnUninterruptedRun) {
  UploadRun run(500);
  run.RunReference();
  run.uploading.upload.delete_after_upload = true;
  // Slow uploads, so kills land inside commands, between the ledger and the delete...
  run.uploading.upload.command = CopyCommand(run.remote, "sleep 0.1; ");
  std::mt19937 random(4);
  int attempt = 0;
  const int kills = KillUntilDone(
      [&] {
        std::vector<std::unique_ptr<ActexProcess>> processes;
        // Whatever the last run left: a remote listing only of what the remote holds.
        ExpectRemoteListsOnlyWhatItHolds(run.remote + "/host_00");
        processes.push_back(std::make_unique<ActexProcess>(
            run.dir.path() + "/run" + std::to_string(attempt++), ExtractArgs(run.uploading)));
        return processes;
      },
      run.reference_time, random, 6);
  RecordProperty("kills", kills);
  std::printf("killed %d times\n", kills);
  EXPECT_GE(kills, 3) << "the run finished too fast to be interrupted";
  ExpectIdentical(run.remote, run.reference.out_dir);
  const std::string host = run.uploading.out_dir + "/host_00";
  EXPECT_THAT(ShardFiles(host), testing::IsEmpty());
  std::string report;
  EXPECT_EQ(Verify(run.dir, run.remote, run.corpus, &report), 0) << report;
  EXPECT_EQ(Verify(run.dir, run.uploading.out_dir, run.corpus, &report), 0) << report;
}

TEST(Upload, EachSimulatedHostUploadsItsOwnFolder) {
  UploadRun run(200);
  std::vector<std::string> args = {"simulate", "--hosts", "2", "--mesh", "2d"};
  for (std::string& arg : ExtractOptionsToArgs(run.uploading)) args.push_back(arg);
  ActexProcess simulate(run.dir.path() + "/simulate", args);
  ASSERT_EQ(simulate.Wait(seconds(180)), 0) << simulate.err();
  for (const std::string host : {"host_00", "host_01"}) {
    const std::string local = run.uploading.out_dir + "/" + host;
    const auto shards = ShardFiles(local);
    EXPECT_FALSE(shards.empty()) << host;
    for (const std::string& shard : shards) {
      EXPECT_EQ(ReadFile(local + "/" + shard), ReadFile(run.remote + "/" + host + "/" + shard))
          << host << "/" << shard;
    }
    EXPECT_EQ(ReadFile(local + "/metadata.json"),
              ReadFile(run.remote + "/" + host + "/metadata.json"));
  }
  std::string report;
  EXPECT_EQ(Verify(run.dir, run.remote, run.corpus, &report), 0) << report;
}

}  // namespace
}  // namespace actex
