// Jobs of several hosts as real `actex` processes talking tcp on 127.0.0.1: the
// same numbers as one process, every document exactly once, and every failure
// (a host with other settings, one that never starts, one killed mid-run) ending
// every other host with the cause named, while listed shards stay readable.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
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

// `documents` pre-tokenized lines of `length` pseudo-random ids below the fixture's
// vocabulary of 512, and a few rejects among them.
std::string Corpus(int documents, int length) {
  std::ostringstream corpus;
  for (int doc = 0; doc < documents; ++doc) {
    if (doc % 17 == 5) {
      corpus << "{\"input_ids\": [1, 2\n";  // not JSON: rejected, still uses its id
      continue;
    }
    std::vector<int> ids;
    for (int i = 0; i < length - doc % 5; ++i) ids.push_back((doc * 131 + i * 29) % 512);
    corpus << nlohmann::json{{"input_ids", ids}}.dump() << '\n';
  }
  return corpus.str();
}

ExtractOptions Options(const std::string& corpus, const std::string& out, int shards_per_host) {
  ExtractOptions options;
  options.model_dir = kModel;
  options.data = {corpus};
  options.out_dir = out;
  options.layers = {0, 1};
  options.sites = {"resid_post", "mlp_post"};
  options.shards = shards_per_host;
  options.dtype = "float32";
  options.batch_tokens = 96;
  options.blas_threads = 1;
  return options;
}

// Every host folder of OUT merged by document id; fails on a document seen twice.
std::map<int64_t, DocumentRows> ReadJob(const std::string& out) {
  std::map<int64_t, DocumentRows> documents;
  for (const auto& entry : fs::directory_iterator(out)) {
    for (auto& [doc, rows] : ReadHostFolder(entry.path().string())) {
      EXPECT_FALSE(documents.contains(doc)) << "document " << doc << " written twice";
      documents[doc] = std::move(rows);
    }
  }
  return documents;
}

std::set<int64_t> RejectedIds(const std::string& out) {
  std::set<int64_t> rejected;
  for (const auto& entry : fs::directory_iterator(out)) {
    std::ifstream file(entry.path() / "rejects.jsonl");
    for (std::string line; std::getline(file, line);) {
      EXPECT_TRUE(rejected.insert(nlohmann::json::parse(line)["doc_id"].get<int64_t>()).second);
    }
  }
  return rejected;
}

struct JobShape {
  std::string name;
  int hosts, shards_per_host;
  std::string mesh;
};

class SimulatedJob : public testing::TestWithParam<JobShape> {};

TEST_P(SimulatedJob, MatchesOneProcessAndWritesEveryDocumentOnce) {
  const JobShape& shape = GetParam();
  TempDir dir;
  const int documents = 40;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(documents, 24));
  auto single = RunExtraction(Options(corpus, dir.path() + "/single", 1));
  ASSERT_TRUE(single) << single.error();
  auto reference = ReadJob(dir.path() + "/single");

  const std::string out = dir.path() + "/simulated";
  std::vector<std::string> args = {"simulate", "--hosts", std::to_string(shape.hosts), "--mesh",
                                   shape.mesh, "--heartbeat-timeout", "20"};
  for (const std::string& arg : ExtractOptionsToArgs(Options(corpus, out, shape.shards_per_host))) {
    args.push_back(arg);
  }
  ActexProcess simulate(dir.path() + "/simulate", args);
  ASSERT_EQ(simulate.Wait(seconds(120)), 0) << simulate.err();

  auto simulated = ReadJob(out);
  std::set<int64_t> rejected = RejectedIds(out);
  for (int64_t doc = 0; doc < documents; ++doc) {
    EXPECT_NE(simulated.contains(doc), rejected.contains(doc))
        << "document " << doc << " must be written or rejected, exactly once";
  }
  EXPECT_EQ(rejected, RejectedIds(dir.path() + "/single"));
  ASSERT_EQ(simulated.size(), reference.size());
  for (const auto& [doc, rows] : reference) {
    EXPECT_EQ(simulated[doc].token_ids, rows.token_ids);
    for (const auto& [site, values] : rows.sites) {
      Deviation deviation = Compare(simulated[doc].sites[site], values);
      EXPECT_LE(deviation.max_abs_error, 1e-5 * deviation.max_abs_reference)
          << shape.name << " doc " << doc << " " << site;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, SimulatedJob,
    testing::Values(JobShape{"TwoHosts1d", 2, 1, "1d"}, JobShape{"TwoHosts2d", 2, 2, "2d"},
                    JobShape{"TwoHostsTwoShards1d", 2, 2, "1d"},
                    JobShape{"ThreeHosts1d", 3, 1, "1d"}, JobShape{"ThreeHosts2d", 3, 1, "2d"},
                    JobShape{"ThreeHostsData2Model3", 3, 2, "data=2,model=3"}),
    [](const testing::TestParamInfo<JobShape>& info) { return info.param.name; });

// Nodes started one by one, as on separate machines.
class ManualJob {
 public:
  explicit ManualJob(const TempDir& dir) : dir_(dir) {
    auto port = FindFreePortTriple();
    EXPECT_TRUE(port) << port.error();
    port_ = port.value_or(0);
  }

  // Starts host `host` of `hosts`; `adjust` changes its options first.
  ActexProcess& Start(int host, int hosts, const std::string& corpus, const std::string& mesh = "1d",
                      const std::function<void(NodeOptions&)>& adjust = [](NodeOptions&) {}) {
    LocalClusterOptions cluster;
    cluster.hosts = hosts;
    cluster.node.mesh = mesh;
    cluster.node.join_timeout = seconds(20);
    cluster.node.heartbeat_timeout = seconds(3);
    cluster.node.extract = Options(corpus, dir_.path() + "/out", 1);
    cluster.node.extract.shard_bytes = 32 << 10;
    adjust(cluster.node);
    std::vector<std::string> args = LocalNodeArgs(cluster, host, port_);
    args.erase(args.begin());  // the binary; ActexProcess adds it
    nodes_.push_back(std::make_unique<ActexProcess>(
        dir_.path() + "/host" + std::to_string(host), args));
    return *nodes_.back();
  }
  int port() const { return port_; }

 private:
  const TempDir& dir_;
  int port_ = 0;
  std::vector<std::unique_ptr<ActexProcess>> nodes_;
};

TEST(MultiHostFailures, HostWithDifferentLayersEndsEveryNodeNamingHostAndFlag) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(20, 16));
  ManualJob job(dir);
  ActexProcess& host0 = job.Start(0, 2, corpus);
  ActexProcess& host1 =
      job.Start(1, 2, corpus, "1d", [](NodeOptions& node) { node.extract.layers = {0}; });
  EXPECT_NE(host0.Wait(seconds(30)), 0);
  EXPECT_NE(host1.Wait(seconds(30)), 0);
  for (ActexProcess* node : {&host0, &host1}) {
    EXPECT_NE(node->err().find("host 1"), std::string::npos) << node->err();
    EXPECT_NE(node->err().find("--layers"), std::string::npos) << node->err();
  }
}

TEST(MultiHostFailures, HostThatNeverStartsIsNamedAtTheJoinDeadline) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(20, 16));
  ManualJob job(dir);
  auto short_wait = [](NodeOptions& node) { node.join_timeout = seconds(2); };
  ActexProcess& host0 = job.Start(0, 3, corpus, "1d", short_wait);
  ActexProcess& host1 = job.Start(1, 3, corpus, "1d", short_wait);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(host0.Wait(seconds(30)), 0);
  EXPECT_NE(host1.Wait(seconds(30)), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(15));
  EXPECT_NE(host0.err().find("host 2"), std::string::npos) << host0.err();
  EXPECT_NE(host1.err().find("host 2"), std::string::npos) << host1.err();
}

// Waits until `host_dir`'s metadata.json lists at least one shard.
bool WaitForFirstShard(const std::string& host_dir, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream file(host_dir + "/metadata.json");
    auto metadata = nlohmann::json::parse(file, nullptr, false);
    if (!metadata.is_discarded() && !metadata["shards"].empty()) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

// Every shard listed anywhere under OUT reads back whole, with its listed size.
void ExpectListedShardsComplete(const std::string& out) {
  for (const auto& entry : fs::directory_iterator(out)) {
    std::ifstream file(entry.path() / "metadata.json");
    auto metadata = nlohmann::json::parse(file, nullptr, false);
    ASSERT_FALSE(metadata.is_discarded()) << entry.path();
    EXPECT_FALSE(metadata["complete"].get<bool>());
    for (const auto& shard : metadata["shards"]) {
      fs::path path = entry.path() / shard["file"].get<std::string>();
      EXPECT_EQ(fs::file_size(path), shard["bytes"].get<uint64_t>()) << path;
    }
    ReadHostFolder(entry.path().string());  // fails the test on an unreadable shard
  }
}

struct KillCase {
  std::string name;
  int killed;
  std::string mesh;
};

class KilledHost : public testing::TestWithParam<KillCase> {};

TEST_P(KilledHost, EndsTheOtherNodeWithinTheHeartbeatTimeout) {
  const KillCase& kill_case = GetParam();
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(6000, 48));
  ManualJob job(dir);
  ActexProcess& host0 = job.Start(0, 2, corpus, kill_case.mesh);
  ActexProcess& host1 = job.Start(1, 2, corpus, kill_case.mesh);
  ASSERT_TRUE(WaitForFirstShard(dir.path() + "/out/host_00", seconds(60))) << host0.err();
  ActexProcess& victim = kill_case.killed == 0 ? host0 : host1;
  ActexProcess& survivor = kill_case.killed == 0 ? host1 : host0;
  victim.Signal(SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  EXPECT_NE(survivor.Wait(seconds(30)), 0);
  // Heartbeat timeout 3 s, plus the time to stop and flush.
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, seconds(10));
  EXPECT_NE(survivor.err().find("host " + std::to_string(kill_case.killed)), std::string::npos)
      << survivor.err();
  ExpectListedShardsComplete(dir.path() + "/out");
}

INSTANTIATE_TEST_SUITE_P(
    Kill9, KilledHost,
    testing::Values(KillCase{"WorkerIn1dMesh", 1, "1d"}, KillCase{"WorkerIn2dMesh", 1, "2d"},
                    KillCase{"CoordinatorIn2dMesh", 0, "2d"}),
    [](const testing::TestParamInfo<KillCase>& info) { return info.param.name; });

TEST(MultiHostMonitor, MonitorAttachedMidRunSeesEveryHost) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(3000, 48));
  ManualJob job(dir);
  ActexProcess& host0 = job.Start(0, 2, corpus, "2d");
  ActexProcess& host1 = job.Start(1, 2, corpus, "2d");
  ASSERT_TRUE(WaitForFirstShard(dir.path() + "/out/host_00", seconds(60))) << host0.err();
  ActexProcess monitor(dir.path() + "/monitor",
                       {"monitor", "tcp://127.0.0.1:" + std::to_string(job.port() + 1), "--json",
                        "--timeout", "20"});
  std::set<int> hosts_seen;
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (hosts_seen.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::istringstream lines(monitor.out());
    for (std::string line; std::getline(lines, line);) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_discarded()) hosts_seen.insert(event["host_id"].get<int>());
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(hosts_seen, (std::set<int>{0, 1})) << monitor.err();
  monitor.Signal(SIGINT);
  EXPECT_EQ(monitor.Wait(seconds(10)), 0);
  // The monitor left without disturbing the run: both nodes finish normally.
  EXPECT_EQ(host0.Wait(seconds(120)), 0) << host0.err();
  EXPECT_EQ(host1.Wait(seconds(120)), 0) << host1.err();
}

}  // namespace
}  // namespace actex
