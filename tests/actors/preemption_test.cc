// Preemption: SIGTERM and SIGINT drain a run instead of killing it. The node ends the
// work in flight at a batch boundary, lists what is whole, says what it kept, exits
// 75, and the same command then finishes with exactly an uninterrupted run's bits.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "actors/local_cluster.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "run_support.h"

namespace actex {
namespace {

using std::chrono::seconds;

nlohmann::json Metadata(const std::string& host_dir) {
  std::ifstream file(host_dir + "/metadata.json");
  return nlohmann::json::parse(file, nullptr, false);
}

// An uninterrupted run of `options` into `reference`, and a run into `out` that
// `interrupt` stops once it has listed a shard.
class Preemption : public testing::Test {
 protected:
  void SetUp() override {
    corpus_ = dir_.Write("corpus.jsonl", Corpus(6000));
    reference_ = SmallShardOptions(corpus_, dir_.path() + "/reference");
    ActexProcess uninterrupted(dir_.path() + "/reference-run", ExtractArgs(reference_));
    ASSERT_EQ(uninterrupted.Wait(seconds(300)), 0) << uninterrupted.err();
    preempted_ = reference_;
    preempted_.out_dir = dir_.path() + "/preempted";
  }

  // Starts the run, waits for its first listed shard, lets `signal_it` signal it, and
  // returns its exit code and what it said.
  std::pair<int, std::string> RunAndSignal(const std::function<void(ActexProcess&)>& signal_it,
                                           std::chrono::steady_clock::duration* took) {
    ActexProcess run(dir_.path() + "/run", ExtractArgs(preempted_));
    EXPECT_TRUE(WaitForFirstShard(preempted_.out_dir + "/host_00", seconds(120))) << run.err();
    const auto signalled = std::chrono::steady_clock::now();
    signal_it(run);
    const int code = run.Wait(seconds(60));
    *took = std::chrono::steady_clock::now() - signalled;
    return {code, run.err()};
  }

  // The same command again finishes the job, equal to the uninterrupted run.
  void ExpectTheSameCommandFinishesIt() {
    const nlohmann::json before = Metadata(preempted_.out_dir + "/host_00");
    ASSERT_FALSE(before.is_discarded());
    EXPECT_FALSE(before["complete"].get<bool>()) << "the run was cut short";
    ActexProcess again(dir_.path() + "/again", ExtractArgs(preempted_));
    ASSERT_EQ(again.Wait(seconds(300)), 0) << again.err();
    ExpectIdentical(preempted_.out_dir, reference_.out_dir);
  }

  TempDir dir_;
  std::string corpus_;
  ExtractOptions reference_, preempted_;
};

TEST_F(Preemption, SigtermDrainsSaysWhatItKeptAndTheSameCommandFinishesToTheBit) {
  std::chrono::steady_clock::duration took{};
  auto [code, err] = RunAndSignal([](ActexProcess& run) { run.Signal(SIGTERM); }, &took);
  ASSERT_EQ(code, kExitStoppedBySignal) << err;
  EXPECT_LT(took, seconds(20)) << "the default --drain-timeout";
  EXPECT_NE(err.find("stopped by SIGTERM (drained at a batch boundary): " + preempted_.out_dir +
                     "/host_00 keeps "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("run the same command to resume"), std::string::npos) << err;
  ExpectTheSameCommandFinishesIt();
}

TEST_F(Preemption, ASecondSignalStopsAtOnceLosingNothingListed) {
  std::chrono::steady_clock::duration took{};
  auto [code, err] = RunAndSignal(
      [](ActexProcess& run) {
        run.Signal(SIGINT);
        run.Signal(SIGINT);
      },
      &took);
  ASSERT_EQ(code, kExitStoppedBySignal) << err;
  EXPECT_LT(took, seconds(10));
  EXPECT_NE(err.find("stopped by SIGINT"), std::string::npos) << err;
  EXPECT_NE(err.find("run the same command to resume"), std::string::npos) << err;
  ExpectTheSameCommandFinishesIt();
}

TEST_F(Preemption, ADrainThatOutlastsItsTimeoutStopsWhereItIsListingWhatIsWhole) {
  preempted_.drain_timeout_seconds = 0;
  std::chrono::steady_clock::duration took{};
  auto [code, err] = RunAndSignal([](ActexProcess& run) { run.Signal(SIGTERM); }, &took);
  ASSERT_EQ(code, kExitStoppedBySignal) << err;
  const nlohmann::json metadata = Metadata(preempted_.out_dir + "/host_00");
  ASSERT_FALSE(metadata.is_discarded());
  EXPECT_NE(err.find("the drain outlasted --drain-timeout: stopped where it was): " +
                     preempted_.out_dir + "/host_00 keeps " +
                     std::to_string(metadata["totals"]["docs"].get<int64_t>()) + " documents"),
            std::string::npos)
      << err;
  ExpectTheSameCommandFinishesIt();
}

// A job of several hosts cannot drain one host alone (a replica may span hosts), so a
// signal to one host stops the job on every host, each keeping what it listed.
TEST(PreemptionOfAJob, ASignalToOneHostStopsEveryHostAndTheSameCommandsFinishTheJob) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(3000));
  auto job = [&](const std::string& out) {
    LocalClusterOptions cluster;
    cluster.hosts = 2;
    cluster.node.mesh = "2d";
    cluster.node.heartbeat_timeout = seconds(5);
    cluster.node.join_timeout = seconds(30);
    cluster.node.extract = SmallShardOptions(corpus, out);
    return cluster;
  };
  auto start = [&](const LocalClusterOptions& cluster, const std::string& name) {
    auto port = FindFreePortTriple();
    EXPECT_TRUE(port) << port.error();
    std::vector<std::unique_ptr<ActexProcess>> nodes;
    for (int host = 0; host < 2; ++host) {
      auto args = LocalNodeArgs(cluster, host, port.value_or(0));
      args.erase(args.begin());  // the binary; ActexProcess adds it
      nodes.push_back(
          std::make_unique<ActexProcess>(dir.path() + "/" + name + std::to_string(host), args));
    }
    return nodes;
  };
  const LocalClusterOptions reference = job(dir.path() + "/reference");
  for (auto& node : start(reference, "reference")) {
    ASSERT_EQ(node->Wait(seconds(300)), 0) << node->err();
  }

  const LocalClusterOptions preempted = job(dir.path() + "/preempted");
  auto nodes = start(preempted, "run");
  ASSERT_TRUE(WaitForFirstShard(dir.path() + "/preempted/host_01", seconds(120)))
      << nodes[1]->err();
  nodes[1]->Signal(SIGTERM);
  EXPECT_EQ(nodes[1]->Wait(seconds(30)), kExitStoppedBySignal) << nodes[1]->err();
  EXPECT_NE(nodes[1]->err().find(
                "stopped by SIGTERM (the job's hosts stop together: stopped where it was)"),
            std::string::npos)
      << nodes[1]->err();
  EXPECT_NE(nodes[0]->Wait(seconds(30)), 0) << nodes[0]->err();
  EXPECT_NE(nodes[0]->err().find("host 1 stopped by signal"), std::string::npos) << nodes[0]->err();

  for (auto& node : start(preempted, "again")) {
    ASSERT_EQ(node->Wait(seconds(300)), 0) << node->err();
  }
  ExpectIdentical(dir.path() + "/preempted", dir.path() + "/reference");
}

}  // namespace
}  // namespace actex
