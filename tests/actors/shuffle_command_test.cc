// `actex shuffle` as users run it: a job of two hosts shuffled and verified
// exactly once, memory held within --memory on an output several times larger,
// kill -9 and the same command again, and bad arguments named.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "actex_process.h"
#include "actors/extract_flag_table.h"
#include "extraction_reader.h"
#include "run_support.h"
#include "storage/shuffled_output.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string FilesBytes(const std::string& dir) {
  std::string bytes;
  for (int64_t f = 0; fs::exists(dir + "/" + ShuffledFileName(f)); ++f) {
    bytes += ReadFile(dir + "/" + ShuffledFileName(f));
  }
  return bytes;
}

int RunToEnd(const std::string& prefix, const std::vector<std::string>& args) {
  ActexProcess process(prefix, args);
  const int code = process.Wait(seconds(120));
  if (code != 0) ADD_FAILURE() << "actex " << args.front() << ": " << process.err();
  return code;
}

TEST(ShuffleCommand, JobOfTwoHostsShufflesAndVerifiesEveryRowOnce) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(30));
  ExtractOptions options = SmallShardOptions(corpus, dir.path() + "/out");
  std::vector<std::string> args = {
      "simulate", "--hosts", "2", "--mesh", "2d", "--heartbeat-timeout", "20"};
  for (const std::string& arg : ExtractOptionsToArgs(options)) args.push_back(arg);
  ASSERT_EQ(RunToEnd(dir.path() + "/simulate", args), 0);
  ASSERT_TRUE(fs::exists(dir.path() + "/out/host_01/metadata.json"));
  ActexProcess shuffle(dir.path() + "/shuffle",
                       {"shuffle", dir.path() + "/out", "--to", dir.path() + "/shuffled",
                        "--rows-per-file", "100", "--memory", "1MB", "--skip-tokens", "3,17",
                        "--dtype", "bfloat16", "--sites", "blocks.1.hook_resid_post"});
  ASSERT_EQ(shuffle.Wait(seconds(120)), 0) << shuffle.err();
  EXPECT_NE(shuffle.out().find("shuffled "), std::string::npos) << shuffle.out();
  ActexProcess verify(dir.path() + "/verify", {"verify", dir.path() + "/shuffled"});
  EXPECT_EQ(verify.Wait(seconds(120)), 0) << verify.out();
  EXPECT_NE(verify.out().find("every kept row exactly once, values equal"), std::string::npos)
      << verify.out();
  // The source shuffled again elsewhere gives the same files.
  ActexProcess again(dir.path() + "/again",
                     {"shuffle", dir.path() + "/out", "--to", dir.path() + "/again_out",
                      "--rows-per-file", "100", "--memory", "64MB", "--skip-tokens", "17,3",
                      "--dtype", "bfloat16", "--sites", "blocks.1.hook_resid_post"});
  ASSERT_EQ(again.Wait(seconds(120)), 0) << again.err();
  EXPECT_EQ(FilesBytes(dir.path() + "/again_out"), FilesBytes(dir.path() + "/shuffled"));
}

TEST(ShuffleCommand, PeakMemoryStaysWithinTheBudgetOnALargerOutput) {
  TempDir dir;
  SyntheticOutput spec;
  spec.documents = 2400;
  spec.sites = {{"blocks.0.hook_resid_post", 256}, {"blocks.1.hook_resid_post", 256}};
  spec.shard_bytes = 4 << 20;
  WriteSyntheticOutput(dir.path() + "/out", spec);
  const int64_t source_bytes = SyntheticRows(spec) * (2 * 256 * 2);
  const int64_t memory = 8 << 20;
  ASSERT_GT(source_bytes, 5 * memory);
  // The process's own footprint: a shuffle that stops at its first check.
  ActexProcess idle(dir.path() + "/idle",
                    {"shuffle", dir.path() + "/nothing", "--to", dir.path() + "/x"});
  ASSERT_EQ(idle.Wait(seconds(60)), 2);
  ActexProcess shuffle(dir.path() + "/shuffle",
                       {"shuffle", dir.path() + "/out", "--to", dir.path() + "/shuffled",
                        "--memory", "8MB", "--rows-per-file", "4096"});
  ASSERT_EQ(shuffle.Wait(seconds(120)), 0) << shuffle.err();
  const long extra_kb = shuffle.max_rss_kb() - idle.max_rss_kb();
  RecordProperty("source_bytes", std::to_string(source_bytes));
  RecordProperty("peak_rss_kb", std::to_string(shuffle.max_rss_kb()));
  RecordProperty("idle_rss_kb", std::to_string(idle.max_rss_kb()));
  EXPECT_LT(extra_kb * 1024, memory)
      << "peak " << shuffle.max_rss_kb() << " kB, idle " << idle.max_rss_kb() << " kB";
  ActexProcess verify(dir.path() + "/verify", {"verify", dir.path() + "/shuffled"});
  EXPECT_EQ(verify.Wait(seconds(120)), 0) << verify.out();
}

TEST(ShuffleCommand, KilledShuffleRunAgainGivesTheSameFiles) {
  TempDir dir;
  SyntheticOutput spec;
  spec.documents = 1200;
  spec.sites = {{"blocks.0.hook_resid_post", 128}};
  spec.shard_bytes = 256 << 10;
  WriteSyntheticOutput(dir.path() + "/out", spec);
  auto args = [&](const std::string& to) {
    return std::vector<std::string>{"shuffle", dir.path() + "/out", "--to", to,       "--memory",
                                    "1MB",     "--rows-per-file",   "1000", "--seed", "3"};
  };
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(RunToEnd(dir.path() + "/reference", args(dir.path() + "/reference_out")), 0);
  const auto reference_time = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  std::mt19937 random(20261123);
  int run = 0;
  const int kills = KillUntilDone(
      [&] {
        std::vector<std::unique_ptr<ActexProcess>> processes;
        processes.push_back(std::make_unique<ActexProcess>(
            dir.path() + "/run" + std::to_string(run++), args(dir.path() + "/shuffled")));
        return processes;
      },
      reference_time, random, 12);
  RecordProperty("kills", kills);
  EXPECT_GE(kills, 2) << "the shuffle finished too fast to be interrupted";
  EXPECT_EQ(FilesBytes(dir.path() + "/shuffled"), FilesBytes(dir.path() + "/reference_out"));
  ActexProcess verify(dir.path() + "/verify", {"verify", dir.path() + "/shuffled"});
  EXPECT_EQ(verify.Wait(seconds(120)), 0) << verify.out();
}

TEST(ShuffleCommand, BadArgumentsAreNamed) {
  TempDir dir;
  ActexProcess missing(dir.path() + "/missing",
                       {"shuffle", dir.path() + "/nothing", "--to", dir.path() + "/x"});
  EXPECT_EQ(missing.Wait(seconds(60)), 2);
  EXPECT_NE(missing.err().find("is not a directory"), std::string::npos) << missing.err();
  SyntheticOutput spec;
  spec.hosts = 1;
  spec.documents = 10;
  WriteSyntheticOutput(dir.path() + "/out", spec);
  for (const auto& [flag, value, expected] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--skip-tokens", "bos,x", "names no model_dir"},
           {"--skip-tokens", "-4", "is not bos, special or a token id"},
           {"--dtype", "int8", "is not float32, float16 or bfloat16"},
           {"--memory", "lots", "--memory"}}) {
    ActexProcess shuffle(dir.path() + "/bad",
                         {"shuffle", dir.path() + "/out", "--to", dir.path() + "/x", flag, value});
    EXPECT_EQ(shuffle.Wait(seconds(60)), 2) << flag << " " << value;
    EXPECT_NE(shuffle.err().find(expected), std::string::npos) << shuffle.err();
  }
  ActexProcess site(dir.path() + "/site", {"shuffle", dir.path() + "/out", "--to",
                                           dir.path() + "/x", "--sites", "blocks.9.hook_mlp_out"});
  EXPECT_EQ(site.Wait(seconds(60)), 2);
  EXPECT_NE(site.err().find("site blocks.9.hook_mlp_out is not in the output"), std::string::npos)
      << site.err();
}

TEST(ExportCommand, GzipShardsAndUnknownSitesAreNamed) {
  TempDir dir;
  SyntheticOutput spec;
  spec.documents = 10;
  spec.gzip_odd_hosts = true;
  WriteSyntheticOutput(dir.path() + "/out", spec);
  ActexProcess gzipped(dir.path() + "/gz", {"export", "--format", "lm_saes", dir.path() + "/out",
                                            "--to", dir.path() + "/lm"});
  EXPECT_EQ(gzipped.Wait(seconds(60)), 2);  // refused before anything was written
  EXPECT_NE(gzipped.err().find("is gzip'd: export from `actex shuffle`'s output"),
            std::string::npos)
      << gzipped.err();
  ActexProcess shuffle(dir.path() + "/shuffle",
                       {"shuffle", dir.path() + "/out", "--to", dir.path() + "/shuffled"});
  ASSERT_EQ(shuffle.Wait(seconds(60)), 0) << shuffle.err();
  ActexProcess site(dir.path() + "/site",
                    {"export", "--format", "lm_saes", dir.path() + "/shuffled", "--to",
                     dir.path() + "/lm", "--sites", "blocks.7.hook_resid_post"});
  EXPECT_EQ(site.Wait(seconds(60)), 2);
  EXPECT_NE(site.err().find("site blocks.7.hook_resid_post is not in"), std::string::npos)
      << site.err();
  ActexProcess exported(
      dir.path() + "/export",
      {"export", "--format", "lm_saes", dir.path() + "/shuffled", "--to", dir.path() + "/lm"});
  EXPECT_EQ(exported.Wait(seconds(60)), 0) << exported.err();
  EXPECT_TRUE(fs::exists(dir.path() + "/lm/blocks.0.hook_resid_post/chunk-00000000.safetensors"));
}

}  // namespace
}  // namespace actex
