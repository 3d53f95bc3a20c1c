// Runs that survive: kill -9 at random moments and the same command again, any
// number of times, ends with exactly the activations of an uninterrupted run.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "actex_process.h"
#include "actors/cli/local_cluster.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(Resume, KilledAndRerunSingleHostEqualsUninterruptedRunToTheBit) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(2000));
  ExtractOptions reference = SmallShardOptions(corpus, dir.path() + "/reference");
  reference.shards = 2;
  const auto reference_start = std::chrono::steady_clock::now();
  ActexProcess uninterrupted(dir.path() + "/reference", ExtractArgs(reference));
  ASSERT_EQ(uninterrupted.Wait(seconds(120)), 0) << uninterrupted.err();
  const auto reference_time =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - reference_start);

  ExtractOptions resumed = reference;
  resumed.out_dir = dir.path() + "/resumed";
  std::mt19937 random(20261122);
  int run = 0;
  const int kills = KillUntilDone(
      [&] {
        std::vector<std::unique_ptr<ActexProcess>> processes;
        processes.push_back(std::make_unique<ActexProcess>(
            dir.path() + "/run" + std::to_string(run++), ExtractArgs(resumed)));
        return processes;
      },
      reference_time, random, 12);
  RecordProperty("kills", kills);
  EXPECT_GE(kills, 3) << "the run finished too fast to be interrupted";
  ExpectIdentical(resumed.out_dir, reference.out_dir);
}

struct MeshCase {
  std::string name, mesh;
  friend void PrintTo(const MeshCase& mesh_case, std::ostream* os) { *os << mesh_case.name; }
};

class MultiHostResume : public testing::TestWithParam<MeshCase> {};

TEST_P(MultiHostResume, KilledAndRerunJobEqualsUninterruptedRunToTheBit) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(700));
  auto job_args = [&](const std::string& out) {
    LocalClusterOptions cluster;
    cluster.hosts = 2;
    cluster.node.mesh = GetParam().mesh;
    cluster.node.heartbeat_timeout = seconds(5);
    cluster.node.join_timeout = seconds(30);
    cluster.node.extract = SmallShardOptions(corpus, out);
    return cluster;
  };
  LocalClusterOptions reference = job_args(dir.path() + "/reference");
  auto port = FindFreePortTriple();
  ASSERT_TRUE(port);
  const auto reference_start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<ActexProcess>> clean;
  for (int host = 0; host < 2; ++host) {
    auto args = LocalNodeArgs(reference, host, *port);
    args.erase(args.begin());
    clean.push_back(
        std::make_unique<ActexProcess>(dir.path() + "/ref" + std::to_string(host), args));
  }
  for (auto& node : clean) ASSERT_EQ(node->Wait(seconds(120)), 0) << node->err();
  const auto reference_time =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - reference_start);

  LocalClusterOptions resumed = job_args(dir.path() + "/resumed");
  std::mt19937 random(7);
  int run = 0;
  const int kills = KillUntilDone(
      [&] {
        auto fresh_port = FindFreePortTriple();
        std::vector<std::unique_ptr<ActexProcess>> nodes;
        for (int host = 0; host < 2; ++host) {
          auto args = LocalNodeArgs(resumed, host, fresh_port.value_or(0));
          args.erase(args.begin());
          nodes.push_back(std::make_unique<ActexProcess>(
              dir.path() + "/run" + std::to_string(run) + "_" + std::to_string(host), args));
        }
        ++run;
        return nodes;
      },
      reference_time, random, 8);
  RecordProperty("kills", kills);
  EXPECT_GE(kills, 2) << "the job finished too fast to be interrupted";
  ExpectIdentical(resumed.node.extract.out_dir, reference.node.extract.out_dir);
}

INSTANTIATE_TEST_SUITE_P(Meshes, MultiHostResume,
                         testing::Values(MeshCase{"OneReplicaOverTwoHosts", "1d"},
                                         MeshCase{"OneReplicaPerHost", "2d"}),
                         [](const testing::TestParamInfo<MeshCase>& info) {
                           return info.param.name;
                         });

TEST(Resume, OtherOptionsOverAnEarlierRunAreRefusedNamingTheFlagUnlessOverwrite) {
  TempDir dir;
  ExtractOptions options =
      SmallShardOptions(dir.Write("corpus.jsonl", Corpus(30)), dir.path() + "/out");
  ASSERT_TRUE(RunExtraction(options));
  ExtractOptions other = options;
  other.layers = {0};
  auto refused = RunExtraction(other);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("--layers"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find("--overwrite"), std::string::npos) << refused.error();
  other.overwrite = true;
  auto replaced = RunExtraction(other);
  ASSERT_TRUE(replaced) << replaced.error();
  EXPECT_EQ(ReadJob(options.out_dir).begin()->second.sites.size(), 2u);  // layer 0 only
}

TEST(Resume, AFinishedRunIsNotRedone) {
  TempDir dir;
  ExtractOptions options =
      SmallShardOptions(dir.Write("corpus.jsonl", Corpus(30)), dir.path() + "/out");
  ASSERT_TRUE(RunExtraction(options));
  const std::string metadata = dir.path() + "/out/host_00/metadata.json";
  const auto written = fs::last_write_time(dir.path() + "/out/host_00/shard_000001.safetensors");
  auto again = RunExtraction(options);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(fs::last_write_time(dir.path() + "/out/host_00/shard_000001.safetensors"), written);
  std::ifstream file(metadata);
  EXPECT_TRUE(nlohmann::json::parse(file)["complete"].get<bool>());
}

TEST(Resume, FullDiskStopsNamingPathAndErrorThenResumeCompletes) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(300));
  ExtractOptions reference = SmallShardOptions(corpus, dir.path() + "/reference");
  ASSERT_TRUE(RunExtraction(reference));

  ExtractOptions full = SmallShardOptions(corpus, dir.path() + "/out");
  full.fail_after_bytes = 400 << 10;
  auto stopped = RunExtraction(full);
  ASSERT_FALSE(stopped);
  EXPECT_NE(stopped.error().find("No space left on device"), std::string::npos) << stopped.error();
  EXPECT_NE(stopped.error().find(dir.path() + "/out/host_00"), std::string::npos)
      << stopped.error();
  EXPECT_FALSE(ReadHostFolder(dir.path() + "/out/host_00").empty())
      << "the shards closed before the disk filled must stay listed and readable";

  full.fail_after_bytes = -1;  // space was freed
  auto resumed = RunExtraction(full);
  ASSERT_TRUE(resumed) << resumed.error();
  ExpectIdentical(full.out_dir, reference.out_dir);
}

}  // namespace
}  // namespace actex
