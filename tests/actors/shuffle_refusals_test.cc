// `actex shuffle` and `actex export` as users run them against careless arguments:
// a --to that would write outside what the user named is refused before anything is
// written, exit codes tell a refusal (2) from a run stopped part way (1, resumable),
// `actex verify` of a shuffle tells faults (1) from a check that cannot run (2), and
// open files stay bounded under a low RLIMIT_NOFILE however many files are written.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "actex_process.h"
#include "extraction_reader.h"
#include "storage/shuffled_output.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// Every file and folder under `dir` (recursively) with its size, to see that nothing
// was written there.
std::string Listing(const std::string& dir) {
  std::string listing;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    listing += entry.path().string();
    if (entry.is_regular_file()) listing += " " + std::to_string(entry.file_size());
    listing += "\n";
  }
  return listing;
}

class ShuffleRefusals : public testing::Test {
 protected:
  void SetUp() override {
    WriteSyntheticOutput(out(), SyntheticOutput{.hosts = 2, .documents = 20});
  }
  std::string out() const { return dir_.path() + "/out"; }

  // Runs actex ARGS to its end; its exit code, stderr in `err`.
  int Run(const std::vector<std::string>& args, std::string* err = nullptr) {
    ActexProcess process(dir_.path() + "/run" + std::to_string(runs_++), args);
    const int code = process.Wait(seconds(60));
    if (err != nullptr) *err = process.err();
    return code;
  }

  TempDir dir_;
  int runs_ = 0;
};

TEST_F(ShuffleRefusals, DestinationOutsideWhatTheUserNamedIsRefusedWritingNothing) {
  fs::create_directories(dir_.path() + "/cwd");
  fs::create_symlink(out(), dir_.path() + "/link_to_out");
  const std::string before = Listing(dir_.path());
  struct Case {
    std::string to, expected;
  };
  const std::vector<Case> cases = {
      {"", "--to is empty"},
      {"/", "is the filesystem root"},
      {dir_.path() + "/cwd/../../../../../../../../..", "is the filesystem root"},
      {out(), "is the source folder"},
      {out() + "/", "is the source folder"},
      {dir_.path() + "/link_to_out", "is the source folder"},
      {out() + "/host_00", "is inside the source folder"},
      {dir_.path() + "/link_to_out/new", "is inside the source folder"},
      {dir_.path(), "holds the source folder"},
      {dir_.path() + "/cwd/..", "holds the source folder"},
  };
  for (const Case& c : cases) {
    std::string err;
    EXPECT_EQ(Run({"shuffle", out(), "--to", c.to}, &err), 2) << "--to '" << c.to << "': " << err;
    EXPECT_NE(err.find(c.expected), std::string::npos) << "--to '" << c.to << "': " << err;
    EXPECT_NE(err.find("--to"), std::string::npos) << err;
    EXPECT_EQ(err.find("resume"), std::string::npos) << err;
    EXPECT_EQ(Run({"export", "--format", "lm_saes", out(), "--to", c.to}, &err), 2)
        << "--to '" << c.to << "': " << err;
    EXPECT_NE(err.find(c.expected), std::string::npos) << "--to '" << c.to << "': " << err;
  }
  // Nothing was written anywhere (the test's run*.out/.err files aside).
  std::string after;
  std::istringstream lines(Listing(dir_.path()));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/run") == std::string::npos) after += line + "\n";
  }
  EXPECT_EQ(after, before);
  EXPECT_FALSE(fs::exists("/blocks.0.hook_resid_post"));
  EXPECT_FALSE(fs::exists("/.shuffle_work"));
}

TEST_F(ShuffleRefusals, RefusalsExitTwoAndARunStoppedPartWayExitsOneSayingItResumes) {
  std::string err;
  // Not an extraction's output.
  EXPECT_EQ(Run({"shuffle", dir_.path() + "/nothing", "--to", dir_.path() + "/a"}, &err), 2);
  EXPECT_NE(err.find("is not a directory"), std::string::npos) << err;
  EXPECT_EQ(err.find("resume"), std::string::npos) << err;
  // A bad flag value, an unknown site, a --to holding other files.
  EXPECT_EQ(Run({"shuffle", out(), "--to", dir_.path() + "/a", "--rows-per-file", "0"}, &err), 2);
  EXPECT_NE(err.find("--rows-per-file"), std::string::npos) << err;
  EXPECT_EQ(Run({"shuffle", out(), "--to", dir_.path() + "/a", "--sites", "blocks.9.x"}, &err), 2);
  EXPECT_NE(err.find("site blocks.9.x is not in the output"), std::string::npos) << err;
  fs::create_directories(dir_.path() + "/full");
  std::ofstream(dir_.path() + "/full/notes.txt") << "mine";
  EXPECT_EQ(Run({"shuffle", out(), "--to", dir_.path() + "/full"}, &err), 2);
  EXPECT_NE(err.find("is not empty"), std::string::npos) << err;
  EXPECT_EQ(Run({"shuffle", out(), "--to", dir_.path() + "/full/notes.txt"}, &err), 2);
  EXPECT_NE(err.find("is a file"), std::string::npos) << err;
  EXPECT_EQ(std::ifstream(dir_.path() + "/full/notes.txt").rdbuf()->sgetc(), 'm');
  // A damaged source shard stops the run part way: exit 1, and it says a rerun resumes.
  const std::string shard = out() + "/host_01/shard_000001.safetensors";
  ASSERT_TRUE(fs::exists(shard));
  {
    std::fstream file(shard, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(shard)) - 20);
    file.put('\x5a');
  }
  EXPECT_EQ(Run({"shuffle", out(), "--to", dir_.path() + "/b"}, &err), 1);
  EXPECT_NE(err.find("host_01/shard_000001.safetensors"), std::string::npos) << err;
  EXPECT_NE(err.find("run the same command again to resume"), std::string::npos) << err;
}

TEST_F(ShuffleRefusals, VerifyOfAShuffleExitsOneForFaultsAndTwoWhenItCannotCheck) {
  const std::string shuffled = dir_.path() + "/shuffled";
  ASSERT_EQ(Run({"shuffle", out(), "--to", shuffled, "--rows-per-file", "50"}), 0);
  ASSERT_EQ(Run({"verify", shuffled}), 0);
  // Its own metadata.json damaged (a listed file's entry lost its fields): a fault.
  const std::string metadata_path = shuffled + "/metadata.json";
  std::string text;
  {
    std::ifstream in(metadata_path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  auto metadata = nlohmann::json::parse(text);
  metadata["files"][0] = nlohmann::json::object();
  std::ofstream(metadata_path) << metadata.dump();
  ActexProcess damaged(dir_.path() + "/damaged", {"verify", shuffled});
  EXPECT_EQ(damaged.Wait(seconds(60)), 1) << damaged.out() << damaged.err();
  EXPECT_NE(damaged.out().find("metadata.json is malformed"), std::string::npos) << damaged.out();
  metadata["version"] = 7;
  std::ofstream(metadata_path) << metadata.dump();
  ActexProcess version(dir_.path() + "/version", {"verify", shuffled});
  EXPECT_EQ(version.Wait(seconds(60)), 1) << version.out() << version.err();
  std::ofstream(metadata_path) << text;
  // The source gone: the check cannot run.
  fs::rename(out(), dir_.path() + "/moved");
  std::string err;
  EXPECT_EQ(Run({"verify", shuffled}, &err), 2);
  EXPECT_NE(err.find("the source"), std::string::npos) << err;
  EXPECT_EQ(Run({"verify", shuffled, "--source", dir_.path() + "/moved"}), 0);
}

// Lowers this process's soft RLIMIT_NOFILE while alive, so the child started
// meanwhile inherits it.
class ScopedOpenFileLimit {
 public:
  explicit ScopedOpenFileLimit(rlim_t limit) {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = limit;
    EXPECT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  }
  ~ScopedOpenFileLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

constexpr int kOpenFileLimit = 32;

// Shuffles `spec`'s output under kOpenFileLimit with --memory 1MB (buckets of ~256 kB)
// and `rows_per_file`, and verifies the result.
void ShuffleUnderTheLimit(const SyntheticOutput& spec, int rows_per_file) {
  TempDir dir;
  WriteSyntheticOutput(dir.path() + "/out", spec);
  const int64_t files = (SyntheticRows(spec) + rows_per_file - 1) / rows_per_file;
  std::unique_ptr<ActexProcess> shuffle;
  {
    ScopedOpenFileLimit limit(kOpenFileLimit);
    shuffle = std::make_unique<ActexProcess>(
        dir.path() + "/shuffle",
        std::vector<std::string>{"shuffle", dir.path() + "/out", "--to", dir.path() + "/shuffled",
                                 "--rows-per-file", std::to_string(rows_per_file), "--memory",
                                 "1MB"});
  }
  ASSERT_EQ(shuffle->Wait(seconds(120)), 0) << shuffle->err();
  EXPECT_TRUE(fs::exists(dir.path() + "/shuffled/" + ShuffledFileName(files - 1)));
  ActexProcess verify(dir.path() + "/verify", {"verify", dir.path() + "/shuffled"});
  EXPECT_EQ(verify.Wait(seconds(120)), 0) << verify.out();
}

TEST(ShuffleOpenFiles, BucketsSpanningManySmallFilesUnderALowOpenFileLimit) {
  SyntheticOutput spec;
  spec.hosts = 1;
  spec.documents = 150;
  spec.sites = {{"blocks.0.hook_resid_post", 64}};
  // Rows of ~150 bytes: a bucket of ~1700 rows spans over 100 output files.
  ASSERT_GT(SyntheticRows(spec), 1700);
  ShuffleUnderTheLimit(spec, 16);
}

TEST(ShuffleOpenFiles, MoreBucketsThanTheOpenFileLimit) {
  SyntheticOutput spec;
  spec.hosts = 1;
  spec.documents = 150;
  spec.sites = {{"blocks.0.hook_resid_post", 1024}, {"blocks.1.hook_resid_post", 1024}};
  spec.shard_bytes = 64 << 20;
  // Rows of ~4 kB with their keys: the scatter writes to ~48 buckets in turn.
  ASSERT_GT(SyntheticRows(spec) * (2 * 1024 * 2 + 24) / (256 << 10), kOpenFileLimit + 8);
  ShuffleUnderTheLimit(spec, 4096);
}

}  // namespace
}  // namespace actex
