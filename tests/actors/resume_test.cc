// Runs that survive: kill -9 at random moments and the same command again, any
// number of times, ends with exactly the activations of an uninterrupted run.
#include <signal.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "actors/local_cluster.h"
#include "actors/node.h"
#include "extraction_reader.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kModel = ACTEX_FIXTURES_DIR "/qwen2-tiny";

// Documents of 10 to 70 tokens, some split into windows, and a few rejects.
std::string Corpus(int documents) {
  std::ostringstream corpus;
  for (int doc = 0; doc < documents; ++doc) {
    if (doc % 23 == 7) {
      corpus << "{\"text\": 42}\n";  // wrong field type: rejected
      continue;
    }
    std::vector<int> ids;
    for (int i = 0; i < 10 + (doc * 37) % 61; ++i) ids.push_back((doc * 97 + i * 31) % 512);
    corpus << nlohmann::json{{"input_ids", ids}}.dump() << '\n';
  }
  return corpus.str();
}

ExtractOptions Options(const std::string& corpus, const std::string& out) {
  ExtractOptions options;
  options.model_dir = kModel;
  options.data = {corpus};
  options.out_dir = out;
  options.layers = {0, 1};
  options.sites = {"resid_post", "attn_out"};
  options.dtype = "float32";
  options.max_seq_len = 32;
  options.overflow = Overflow::kSplit;
  options.batch_tokens = 100;
  options.shard_bytes = 48 << 10;
  options.blas_threads = 1;
  return options;
}

// `actex extract` with `options`: the same flags a node takes, but --shards.
std::vector<std::string> ExtractArgs(const ExtractOptions& options) {
  std::vector<std::string> args = {"extract"};
  for (std::string& arg : ExtractOptionsToArgs(options)) {
    args.push_back(arg == "--shards-per-host" ? "--shards" : arg);
  }
  return args;
}

// Same documents, same tokens, and every activation equal to the last bit.
void ExpectIdentical(const std::string& out, const std::string& reference_out) {
  auto actual = ReadJob(out);
  auto reference = ReadJob(reference_out);
  ASSERT_EQ(actual.size(), reference.size());
  for (const auto& [doc, rows] : reference) {
    ASSERT_TRUE(actual.contains(doc)) << "document " << doc << " missing";
    EXPECT_EQ(actual[doc].token_ids, rows.token_ids) << doc;
    EXPECT_EQ(actual[doc].positions, rows.positions) << doc;
    for (const auto& [site, values] : rows.sites) {
      const auto& got = actual[doc].sites[site];
      ASSERT_EQ(got.size(), values.size());
      EXPECT_EQ(std::memcmp(got.data(), values.data(), values.size() * sizeof(float)), 0)
          << "document " << doc << " " << site << " differs from the uninterrupted run";
    }
  }
  EXPECT_EQ(RejectedIds(out), RejectedIds(reference_out));
}

// Runs `start` again and again, killing it with SIGKILL after a random moment,
// until a run ends by itself; returns how many runs were killed.
int KillUntilDone(const std::function<std::vector<std::unique_ptr<ActexProcess>>()>& start,
                  std::mt19937& random, int max_kills) {
  int kills = 0;
  while (true) {
    auto processes = start();
    std::uniform_int_distribution<int> delay(30, 500);
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(delay(random));
    bool ended = false;
    while (!ended && std::chrono::steady_clock::now() < deadline) {
      ended = true;
      for (auto& process : processes) ended = ended && process->Poll().has_value();
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (ended || kills >= max_kills) {
      for (auto& process : processes) {
        EXPECT_EQ(process->Wait(seconds(120)), 0) << process->err();
      }
      return kills;
    }
    for (auto& process : processes) process->Signal(SIGKILL);
    for (auto& process : processes) process->Wait(seconds(10));
    ++kills;
  }
}

TEST(Resume, KilledAndRerunSingleHostEqualsUninterruptedRunToTheBit) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(2000));
  ExtractOptions reference = Options(corpus, dir.path() + "/reference");
  reference.shards = 2;
  ActexProcess uninterrupted(dir.path() + "/reference", ExtractArgs(reference));
  ASSERT_EQ(uninterrupted.Wait(seconds(120)), 0) << uninterrupted.err();

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
      random, 12);
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
    cluster.node.extract = Options(corpus, out);
    return cluster;
  };
  LocalClusterOptions reference = job_args(dir.path() + "/reference");
  auto port = FindFreePortTriple();
  ASSERT_TRUE(port);
  std::vector<std::unique_ptr<ActexProcess>> clean;
  for (int host = 0; host < 2; ++host) {
    auto args = LocalNodeArgs(reference, host, *port);
    args.erase(args.begin());
    clean.push_back(std::make_unique<ActexProcess>(dir.path() + "/ref" + std::to_string(host), args));
  }
  for (auto& node : clean) ASSERT_EQ(node->Wait(seconds(120)), 0) << node->err();

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
      random, 8);
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
  ExtractOptions options = Options(dir.Write("corpus.jsonl", Corpus(30)), dir.path() + "/out");
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
  ExtractOptions options = Options(dir.Write("corpus.jsonl", Corpus(30)), dir.path() + "/out");
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
  ExtractOptions reference = Options(corpus, dir.path() + "/reference");
  ASSERT_TRUE(RunExtraction(reference));

  ExtractOptions full = Options(corpus, dir.path() + "/out");
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
