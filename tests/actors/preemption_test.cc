// Preemption: SIGTERM, SIGINT and SIGHUP drain a run instead of killing it. The node finishes
// the chunks in progress, lists what is whole, says what it kept, exits
// 75, and the same command then finishes with exactly an uninterrupted run's bits.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "actex_process.h"
#include "actors/cli/local_cluster.h"
#include "actors/extraction_summary.h"
#include "actors/node_options.h"
#include "extraction_reader.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

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
  EXPECT_NE(err.find("stopped by SIGTERM (drained at a chunk's end): " + preempted_.out_dir +
                     "/host_00 keeps "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("run the same command to resume"), std::string::npos) << err;
  ExpectTheSameCommandFinishesIt();
}

// A closed terminal or ssh session sends SIGHUP, whose default would kill the run
// mid-chunk: it drains as SIGTERM does, and the rerun's output verifies.
TEST_F(Preemption, SighupDrainsLikeSigtermAndTheRerunVerifies) {
  std::chrono::steady_clock::duration took{};
  auto [code, err] = RunAndSignal([](ActexProcess& run) { run.Signal(SIGHUP); }, &took);
  ASSERT_EQ(code, kExitStoppedBySignal) << err;
  EXPECT_NE(err.find("stopped by SIGHUP (drained at a chunk's end): " + preempted_.out_dir +
                     "/host_00 keeps "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("run the same command to resume"), std::string::npos) << err;
  ExpectTheSameCommandFinishesIt();
  ActexProcess verify(dir_.path() + "/verify", {"verify", preempted_.out_dir});
  EXPECT_EQ(verify.Wait(seconds(120)), 0) << verify.out() << verify.err();
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

// Documents listed over every host folder below `out`.
int64_t ListedDocuments(const std::string& out) {
  int64_t docs = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(out, error)) {
    const nlohmann::json metadata = Metadata(entry.path().string());
    if (!metadata.is_discarded()) docs += metadata["totals"]["docs"].get<int64_t>();
  }
  return docs;
}

// Waits until the hosts list more than `before` documents; false past `limit`.
bool WaitForMoreListed(const std::string& out, int64_t before, seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ListedDocuments(out) > before) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A signalled host of a leased (2d) job drains alone, keeping what it listed. A
// signalled worker gives back its leases and the others finish the job without it.
// A signalled host 0 hands the job over to the standby coordinator on host 1, and the
// others go on; host 1, signalled in turn while it coordinates, takes the job with
// it, and the same commands finish the job. Either way the job ends with an
// uninterrupted run's bits.
TEST(PreemptionOfAJob, ASignalledWorkerDrainsAloneAndTheOthersFinishTheJob) {
  constexpr int kHosts = 3;
  TempDir dir;
  // Long enough that the second run still has work when host 2 is signalled.
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(6000));
  auto job = [&](const std::string& out) {
    LocalClusterOptions cluster;
    cluster.hosts = kHosts;
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
    for (int host = 0; host < kHosts; ++host) {
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

  const std::string out = dir.path() + "/preempted";
  const LocalClusterOptions preempted = job(out);
  // Host 0 drains and hands the job over to the standby on host 1; hosts 1 and 2 go
  // on. Then host 1, which coordinates the job now, drains and takes the job with it.
  auto first = start(preempted, "run1-");
  ASSERT_TRUE(WaitForMoreListed(out, 0, seconds(120))) << first[0]->err();
  first[0]->Signal(SIGTERM);
  EXPECT_EQ(first[0]->Wait(seconds(30)), kExitStoppedBySignal) << first[0]->err();
  EXPECT_NE(first[0]->err().find("the standby coordinator takes the job over"), std::string::npos)
      << first[0]->err();
  ASSERT_TRUE(WaitForLine(*first[1], "took over the job with 2 of its 2 hosts", seconds(30)))
      << first[1]->err();
  first[1]->Signal(SIGTERM);
  EXPECT_EQ(first[1]->Wait(seconds(30)), kExitStoppedBySignal) << first[1]->err();
  EXPECT_NE(first[2]->Wait(seconds(30)), 0) << first[2]->err();
  EXPECT_NE(first[2]->err().find("host 1 failed: host 1 stopped by signal"), std::string::npos)
      << first[2]->err();
  // Host 2 (a worker): it drains alone and gives back its leases; the others finish
  // the job, its chunks included, and host 0 names host 2 when the job ends.
  const int64_t before = ListedDocuments(out);
  auto second = start(preempted, "run2-");
  ASSERT_TRUE(WaitForMoreListed(out, before, seconds(120))) << second[2]->err();
  second[2]->Signal(SIGTERM);
  EXPECT_EQ(second[2]->Wait(seconds(30)), kExitStoppedBySignal) << second[2]->err();
  EXPECT_NE(second[2]->err().find("the hosts still in the job take over its chunks"),
            std::string::npos)
      << second[2]->err();
  EXPECT_EQ(second[1]->Wait(seconds(120)), 0) << second[1]->err();
  EXPECT_EQ(second[0]->Wait(seconds(120)), 0) << second[0]->err();
  EXPECT_NE(second[0]->err().find("the job finished without 1 host(s)"), std::string::npos)
      << second[0]->err();
  EXPECT_NE(second[0]->err().find("host 2 stopped by signal"), std::string::npos)
      << second[0]->err();
  EXPECT_FALSE(Metadata(out + "/host_02").value("complete", true))
      << "host 2 finished before it was signalled";
  ExpectIdentical(out, dir.path() + "/reference");
  // The same commands again find every chunk listed: nothing is computed twice.
  for (auto& node : start(preempted, "again")) {
    ASSERT_EQ(node->Wait(seconds(300)), 0) << node->err();
  }
  ExpectIdentical(out, dir.path() + "/reference");
}

// A host waiting at the final barrier has finished its part. A stop signal there
// ends the wait at once: the host says so and leaves, and the job finishes without
// it, even where replicas span hosts. Two replicas of two hosts (data=2,model=2).
// Leased hosts reach the final barrier together, once every chunk is listed, so host
// 1 is frozen (SIGSTOP) to hold the others there, at a time its replica has nothing
// to do: host 3 is frozen first, so that its replica keeps its last chunks while
// hosts 0-1 finish every other one; then host 1 is frozen and host 3 woken. Its
// replica finishes the job, and host 2 (its writer) waits for host 1 at the final
// barrier, where it is signalled.
TEST(PreemptionOfAJob, AHostSignalledAtTheFinalBarrierLeavesAndTheJobFinishesWithoutIt) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(1200, 48));
  const std::string out = dir.path() + "/out";
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(
      4, corpus, "data=2,model=2", [](NodeOptions& node) { node.heartbeat_timeout = seconds(60); });
  ASSERT_TRUE(WaitForFirstShard(out + "/host_02", seconds(60))) << nodes[2]->err();
  nodes[3]->Signal(SIGSTOP);
  auto wait_for = [](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(50);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    return done();
  };
  ASSERT_TRUE(wait_for([&] { return HasNothingLeftToDo(out + "/host_00", 0); })) << nodes[0]->err();
  nodes[1]->Signal(SIGSTOP);
  nodes[3]->Signal(SIGCONT);
  ASSERT_TRUE(wait_for([&] {
    return nodes[2]->err().find("waiting for the other hosts to finish") != std::string::npos;
  })) << nodes[2]->err();
  EXPECT_TRUE(Metadata(out + "/host_02").value("complete", false)) << nodes[2]->err();
  nodes[2]->Signal(SIGTERM);
  EXPECT_EQ(nodes[2]->Wait(seconds(10)), kExitStoppedBySignal) << nodes[2]->err();
  nodes[1]->Signal(SIGCONT);
  EXPECT_NE(nodes[2]->err().find("stopped by SIGTERM (its part was complete; it was waiting for "
                                 "the other hosts)"),
            std::string::npos)
      << nodes[2]->err();
  EXPECT_NE(nodes[2]->err().find("the job finishes without it"), std::string::npos)
      << nodes[2]->err();
  for (int host : {0, 1, 3}) {
    EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
  }
  EXPECT_NE(nodes[0]->err().find("it had finished its part, so the job goes on without it"),
            std::string::npos)
      << nodes[0]->err();
  ExpectVerified(dir, out);
}

}  // namespace
}  // namespace actex
