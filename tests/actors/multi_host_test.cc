// Jobs of several hosts as real `actex` processes talking tcp on 127.0.0.1: the
// same numbers as one process, every document exactly once, a host with other
// settings or one that never starts ending every other host with the cause named, and
// a monitor attached mid-run. Lost hosts: killed_host_test.cc; keys and strangers'
// bytes: job_strangers_test.cc.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "actex_process.h"
#include "actors/extract_flag_table.h"
#include "actors/mesh_plan.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct JobShape {
  std::string name;
  int hosts, shards_per_host;
  std::string mesh;
  friend void PrintTo(const JobShape& shape, std::ostream* os) { *os << shape.name; }
};

class SimulatedJob : public testing::TestWithParam<JobShape> {};

TEST_P(SimulatedJob, MatchesOneProcessAndWritesEveryDocumentOnce) {
  const JobShape& shape = GetParam();
  TempDir dir;
  const int documents = 40;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(documents, 24));
  auto single = RunExtraction(TinyModelOptions(corpus, dir.path() + "/single", 1));
  ASSERT_TRUE(single) << single.error();
  auto reference = ReadJob(dir.path() + "/single");

  const std::string out = dir.path() + "/simulated";
  std::vector<std::string> args = {"simulate", "--hosts",  std::to_string(shape.hosts),
                                   "--mesh",   shape.mesh, "--heartbeat-timeout",
                                   "20"};
  for (const std::string& arg :
       ExtractOptionsToArgs(TinyModelOptions(corpus, out, shape.shards_per_host))) {
    args.push_back(arg);
  }
  ActexProcess simulate(dir.path() + "/simulate", args);
  ASSERT_EQ(simulate.Wait(seconds(120)), 0) << simulate.err();

  auto simulated = ReadJob(out);
  std::multiset<int64_t> rejected = RejectedIds(out);
  for (int64_t doc = 0; doc < documents; ++doc) {
    EXPECT_NE(simulated.contains(doc), rejected.contains(doc))
        << "document " << doc << " must be written or rejected, exactly once";
    EXPECT_LE(rejected.count(doc), 1u) << "document " << doc << " listed as rejected twice";
  }
  EXPECT_EQ(rejected, RejectedIds(dir.path() + "/single"));
  ASSERT_EQ(simulated.size(), reference.size());
  // Replicas of one shard, like the reference, form its batches (a batch never crosses
  // a chunk), so they give its bits; shards of a replica sum in another order.
  auto mesh = PlanMesh(shape.mesh, shape.hosts, shape.shards_per_host, 0, 1, 3);
  ASSERT_TRUE(mesh) << mesh.error();
  for (const auto& [doc, rows] : reference) {
    EXPECT_EQ(simulated[doc].token_ids, rows.token_ids);
    for (const auto& [site, values] : rows.sites) {
      if (mesh->model == 1) {
        EXPECT_EQ(simulated[doc].sites[site], values)
            << shape.name << " doc " << doc << " " << site;
        continue;
      }
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

TEST(MultiHostMonitor, MonitorAttachedMidRunSeesEveryHost) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(3000, 48));
  ManualJob job(dir);
  // Larger shards than the kill tests need: fewer fsyncs, a shorter test.
  auto larger_shards = [](NodeOptions& node) { node.extract.shard_bytes = 256 << 10; };
  ActexProcess& host0 = job.Start(0, 2, corpus, "2d", larger_shards);
  ActexProcess& host1 = job.Start(1, 2, corpus, "2d", larger_shards);
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
      if (event.is_discarded()) continue;
      hosts_seen.insert(event["host_id"].get<int>());
      // Every event names the job's size, so `--exit-when-finished` waits for both.
      EXPECT_EQ(event["num_hosts"], 2) << line;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(hosts_seen, (std::set<int>{0, 1})) << monitor.err();
  EXPECT_EQ(host0.Wait(seconds(120)), 0) << host0.err();
  EXPECT_EQ(host1.Wait(seconds(120)), 0) << host1.err();
  // In a leased job a host's share is whatever it is granted, so a host names the
  // job's total; what the hosts wrote or rejected adds up to the 3000 ids.
  std::map<int, nlohmann::json> finished;
  const auto finish_deadline = std::chrono::steady_clock::now() + seconds(10);
  while (finished.size() < 2 && std::chrono::steady_clock::now() < finish_deadline) {
    std::istringstream lines(monitor.out());
    for (std::string line; std::getline(lines, line);) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (event.is_discarded()) continue;
      if (event["docs_total"] != -1) {
        EXPECT_TRUE(event["docs_total_of_job"].get<bool>()) << line;
      }
      if (event["kind"] == "finished") finished[event["host_id"].get<int>()] = event;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_EQ(finished.size(), 2u) << monitor.out();
  int64_t answered = 0;  // written or rejected
  for (auto& [host, event] : finished) {
    answered += event["docs_done"].get<int64_t>() + event["rejected"].get<int64_t>();
  }
  EXPECT_EQ(answered, 3000) << monitor.out();
  // The monitor left without disturbing the run.
  monitor.Signal(SIGINT);
  EXPECT_EQ(monitor.Wait(seconds(10)), 0);
}

}  // namespace
}  // namespace actex
