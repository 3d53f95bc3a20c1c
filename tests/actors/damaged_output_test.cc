// Careless and hostile edits of a real extraction's output folder, met by the real
// actex binary: a shard whose metadata.json entry was lost is set aside by a resume,
// never deleted; a second run on the same output is refused naming the first; and
// a metadata.json with fields of the wrong type is an error naming the file from
// every command that reads it (no uncaught exception, no signal).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::chrono::seconds kLimit{120};
std::vector<std::string> ExtractArgs(const std::string& corpus, const std::string& out) {
  return {"extract",  "--model",      kTinyModelDir, "--data",       corpus,       "--out",
          out,        "--layers",     "0",           "--sites",      "resid_post", "--dtype",
          "bfloat16", "--shard-size", "1",           "--chunk-docs", "1",          "--blas-threads",
          "1"};
}

class DamagedOutput : public testing::Test {
 protected:
  // One real extraction for the whole suite: documents 0..3 in one shard each.
  static void SetUpTestSuite() {
    run_ = new TempDir();
    corpus_ = run_->Write("corpus.jsonl",
                          "{\"input_ids\": [1, 2, 3]}\n{\"input_ids\": [4, 5]}\n"
                          "{\"input_ids\": [6, 7, 8, 9]}\n{\"input_ids\": [10]}\n");
    ActexOutcome extracted =
        RunActex(run_->path() + "/extract", ExtractArgs(corpus_, run_->path() + "/out"), kLimit);
    ASSERT_EQ(extracted.exit_code, 0) << extracted.err;
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(run_, nullptr);
    fs::copy(run_->path() + "/out", Out(), fs::copy_options::recursive);
  }
  std::string Out() const { return dir_.path() + "/out"; }
  std::string Host() const { return Out() + "/host_00"; }
  std::string Metadata() const { return Host() + "/metadata.json"; }
  ActexOutcome Actex(const std::string& name, std::vector<std::string> args) const {
    return RunActex(dir_.path() + "/" + name, std::move(args), kLimit);
  }
  ActexOutcome Resume() const { return Actex("resume", ExtractArgs(corpus_, Out())); }

  static TempDir* run_;
  static std::string corpus_;
  TempDir dir_;
};

TempDir* DamagedOutput::run_ = nullptr;
std::string DamagedOutput::corpus_;

// metadata.json loses the entry of its last shard (and the shard's chunk), as an
// edit or a damaged disk may leave it: the file is the only copy of document 3.
void ForgetLastShard(const std::string& metadata_path, bool fix_totals) {
  nlohmann::json metadata = ReadJson(metadata_path);
  const nlohmann::json last = metadata["shards"].back();
  metadata["shards"].erase(metadata["shards"].size() - 1);
  metadata["complete"] = false;
  if (fix_totals) {
    for (const char* key : {"docs", "tokens", "bytes"}) {
      metadata["totals"][key] = metadata["totals"][key].get<int64_t>() - last[key].get<int64_t>();
    }
    metadata["totals"]["shards"] = metadata["totals"]["shards"].get<int64_t>() - 1;
  }
  WriteJson(metadata_path, metadata);
}

TEST_F(DamagedOutput, AnUnlistedShardIsSetAsideByAResumeNeverDeleted) {
  for (const bool fix_totals : {true, false}) {
    SCOPED_TRACE(fix_totals ? "totals kept consistent" : "totals left as they were");
    fs::remove_all(Out());
    fs::copy(run_->path() + "/out", Out(), fs::copy_options::recursive);
    const std::string shard = Host() + "/shard_000004.safetensors";
    const std::string bytes = ReadBytes(shard);
    ForgetLastShard(Metadata(), fix_totals);

    ActexOutcome verified = Actex("verify", {"verify", Out(), "--allow-incomplete"});
    EXPECT_THAT(verified.out, HasSubstr("host_00/shard_000004.safetensors: shard not listed in "
                                        "metadata.json, whole (its header and size agree)"));
    EXPECT_THAT(verified.out, HasSubstr("restore its entry to keep it"));
    EXPECT_THAT(verified.out, Not(HasSubstr("safe to delete (a resume")));

    ActexOutcome resumed = Resume();
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    const std::string aside = Host() + "/unlisted/shard_000004.safetensors";
    EXPECT_THAT(resumed.err, HasSubstr("moved to " + aside));
    ASSERT_TRUE(fs::exists(aside));
    EXPECT_EQ(ReadBytes(aside), bytes) << "set aside byte for byte";
    // The resume computed document 3 again, into a shard of the same name.
    EXPECT_EQ(ReadBytes(shard), bytes);

    ActexOutcome after = Actex("verify-after", {"verify", Out()});
    EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
    EXPECT_THAT(after.out, HasSubstr("host_00/unlisted: shards a resume set aside"));
  }
}

TEST_F(DamagedOutput, ASecondUnlistedShardOfTheSameNameIsKeptBesideTheFirst) {
  ForgetLastShard(Metadata(), true);
  fs::create_directories(Host() + "/unlisted");
  fs::copy_file(Host() + "/shard_000001.safetensors",
                Host() + "/unlisted/shard_000004.safetensors");
  ActexOutcome resumed = Resume();
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(fs::exists(Host() + "/unlisted/shard_000004.safetensors"));
  EXPECT_TRUE(fs::exists(Host() + "/unlisted/2_shard_000004.safetensors"));
}

TEST_F(DamagedOutput, ASecondRunOnTheSameOutputIsRefusedNamingTheFirst) {
  // A corpus long enough that the first run is still going when the second starts.
  std::string lines;
  for (int i = 0; i < 20000; ++i) lines += "{\"input_ids\": [1, 2, 3, 4, 5, 6, 7, 8]}\n";
  const std::string corpus = dir_.Write("long.jsonl", lines);
  const std::string out = dir_.path() + "/busy";
  ActexProcess first(dir_.path() + "/first", ExtractArgs(corpus, out));
  const std::string lock = out + "/.host_00.lock";
  const std::string holder = "pid " + std::to_string(first.pid()) + " on host ";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ReadBytes(lock).find(holder) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    ASSERT_FALSE(first.Poll().has_value()) << first.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_THAT(ReadBytes(lock), HasSubstr(holder));

  ActexOutcome second = Actex("second", ExtractArgs(corpus, out));
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_THAT(second.err, HasSubstr("is being written by another actex run (" + holder));
  EXPECT_THAT(second.err, HasSubstr("run this command again to resume"));
  EXPECT_FALSE(first.Poll().has_value()) << "the first run goes on";

  // Killed, the first run leaves its lock file behind; it does not block a resume.
  first.Signal(SIGKILL);
  first.Wait(kLimit);
  ASSERT_TRUE(fs::exists(lock));
  ActexProcess third(dir_.path() + "/third", ExtractArgs(corpus, out));
  const std::string third_holder = "pid " + std::to_string(third.pid()) + " on host ";
  const auto third_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ReadBytes(lock).find(third_holder) == std::string::npos &&
         std::chrono::steady_clock::now() < third_deadline) {
    ASSERT_FALSE(third.Poll().has_value()) << third.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_THAT(ReadBytes(lock), HasSubstr(third_holder));
  third.Signal(SIGKILL);
  third.Wait(kLimit);
}

// Each edit is met by verify (exit 1), inspect, shuffle, export and a resume (exit 1
// or 2), each naming metadata.json; none dies of an exception.
TEST_F(DamagedOutput, AMetadataFieldOfTheWrongTypeIsAnErrorFromEveryCommand) {
  struct Case {
    const char* pointer;
    nlohmann::json value;
  };
  for (const Case& c : {Case{"/shards/0", nullptr}, Case{"/shards", "x"}, Case{"/complete", "yes"},
                        Case{"/totals", nullptr}, Case{"/sites", 5},
                        Case{"/statistics/blocks.0.hook_resid_post/width", -1},
                        Case{"/shards/0/chunks/0", "x"}, Case{"/shards/0/bytes", "12"}}) {
    SCOPED_TRACE(std::string(c.pointer) + " = " + c.value.dump());
    fs::remove_all(Out());
    fs::copy(run_->path() + "/out", Out(), fs::copy_options::recursive);
    nlohmann::json metadata = ReadJson(Metadata());
    metadata[nlohmann::json::json_pointer(c.pointer)] = c.value;
    WriteJson(Metadata(), metadata);

    ActexOutcome verified = Actex("verify", {"verify", Out()});
    EXPECT_EQ(verified.exit_code, 1) << verified.out << verified.err;
    EXPECT_THAT(verified.out + verified.err, HasSubstr("metadata.json"));
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"inspect", {"inspect", Out()}},
             {"inspect-stats", {"inspect", Out(), "--stats"}},
             {"shuffle", {"shuffle", Out(), "--to", dir_.path() + "/shuffled"}},
             {"export", {"export", "--format", "lm_saes", Out(), "--to", dir_.path() + "/export"}},
             {"resume", ExtractArgs(corpus_, Out())}}) {
      SCOPED_TRACE(name);
      ActexOutcome outcome = Actex(name, args);
      // Not every edit stops every command (inspect prints what it does not check);
      // none may end in a signal, and a refusal names the file.
      EXPECT_THAT(outcome.exit_code, AnyOf(0, 1, 2)) << outcome.err;
      if (outcome.exit_code != 0) {
        EXPECT_THAT(outcome.err, HasSubstr("metadata.json"));
      }
    }
  }
}

TEST_F(DamagedOutput, AMetadataJsonThatIsAFifoIsRefusedByEveryCommandNotReadForever) {
  fs::remove(Metadata());
  ASSERT_EQ(::mkfifo(Metadata().c_str(), 0644), 0);  // nothing will ever write to it
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"resume", ExtractArgs(corpus_, Out())},
           {"inspect", {"inspect", Out()}},
           {"verify", {"verify", Out()}}}) {
    SCOPED_TRACE(name);
    const ActexOutcome outcome = Actex(name, args);
    EXPECT_THAT(outcome.exit_code, AnyOf(1, 2)) << outcome.err;
    EXPECT_THAT(outcome.out + outcome.err, HasSubstr("FIFO"));
  }
}

}  // namespace
}  // namespace actex
