// Host 0's loss in leased jobs, as real `actex node` processes on 127.0.0.1: with
// three hosts or more the standby coordinator (on host 1 in a 2d mesh) takes over
// and the others finish the job (host 0 killed, or signalled: then it hands the job
// over at once); a host 0 that was only frozen is fenced off when it wakes; with two hosts the job
// ends cleanly and the same commands finish it. In every case the job ends with every document
// once, equal to one process to the bit, and `actex verify` passes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "actors/cli/local_cluster.h"
#include "actors/extraction_summary.h"
#include "leased_job_fixture.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class StandbyTakeover : public LeasedJobFixture {
 protected:
  static constexpr int kHosts = 4;
  // Waits for hosts 1-3, which finish the job under the standby. They end in
  // success, or (host 1, whose coordinator ran the end) naming the chunks host 0 was
  // listing when it went: those wait for its folder, and the same four commands then
  // finish the job.
  void ExpectTheOthersFinish() {
    const int host1 = nodes[1]->Wait(seconds(120));
    for (int host = 2; host < kHosts; ++host) {
      EXPECT_EQ(nodes[host]->Wait(seconds(30)), 0) << nodes[host]->err();
      EXPECT_NE(nodes[host]->err().find("the standby coordinator at tcp://127.0.0.1:"),
                std::string::npos)
          << nodes[host]->err();
    }
    EXPECT_NE(nodes[1]->err().find("took over the job with 3 of its 4 hosts"), std::string::npos)
        << nodes[1]->err();
    const bool waits = nodes[1]->err().find("wait for host-0's folder") != std::string::npos;
    EXPECT_EQ(host1, waits ? 1 : 0) << nodes[1]->err();
    EXPECT_FALSE(Metadata(out + "/host_00").value("complete", true));
    if (waits) {
      std::printf("host 0 went while listing: the same commands finish the job\n");
      FinishWithTheSameCommands();
    }
  }
  // Starts the job's hosts and sends host 0 `signal` once it listed a shard.
  void StartAndSignalHost0(int signal) {
    started = std::chrono::steady_clock::now();
    nodes = job.StartAll(kHosts, corpus, "2d");
    ASSERT_TRUE(WaitForFirstShard(out + "/host_00", seconds(60))) << nodes[0]->err();
    if (signal != SIGTERM) std::this_thread::sleep_for(milliseconds(100));  // past a listing
    nodes[0]->Signal(signal);
  }
  void FinishWithTheSameCommands() {
    // Host 0's folder is locked while its process lives, frozen or not (a process
    // that wakes could still write there): wake it and let it end first, as a user
    // must before running its command again.
    if (!nodes[0]->Poll().has_value()) {
      nodes[0]->Signal(SIGCONT);
      nodes[0]->Wait(seconds(30));
    }
    // The same command's run writes its log where host 0's went: keep what it said.
    first_host0_log_ = nodes[0]->err();
    ManualJob again(dir);
    for (ActexProcess* node : again.StartAll(kHosts, corpus, "2d")) {
      EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
    }
  }
  double SecondsSinceStart() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  // Prints this job's wall time since it started against the same job's uninterrupted.
  void PrintAgainstUninterrupted(const char* what) {
    const double took = SecondsSinceStart();
    const double uninterrupted = UninterruptedSeconds();
    std::printf("4 hosts, 2d, 4800 documents: uninterrupted %.2f s; %s: %.2f s (%.2f x)\n",
                uninterrupted, what, took, took / uninterrupted);
  }
  // The wall time of the same job uninterrupted, written elsewhere.
  double UninterruptedSeconds() {
    TempDir clean;
    ManualJob reference(clean);
    const auto start = std::chrono::steady_clock::now();
    for (ActexProcess* node : reference.StartAll(kHosts, corpus, "2d")) {
      EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // Starts the job's hosts, each given --standby-coordinator, and waits until host 0
  // listed a shard.
  void StartWithAStandbyAddress() {
    auto ports = FindFreePortTriple();
    ASSERT_TRUE(ports) << ports.error();
    standby_port_ = *ports;
    started = std::chrono::steady_clock::now();
    at_the_standby_ = [port = *ports](NodeOptions& node) {
      node.standby_coordinator = "127.0.0.1:" + std::to_string(port);
    };
    for (int host = 0; host < kHosts; ++host) {
      nodes.push_back(&job.Start(host, kHosts, corpus, "2d", at_the_standby_));
    }
    ASSERT_TRUE(WaitForFirstShard(out + "/host_00", seconds(60))) << nodes[0]->err();
  }

  ManualJob job{dir};
  std::vector<ActexProcess*> nodes;
  std::string first_host0_log_;  // host 0's first run, once the same commands ran again
  int standby_port_ = 0;
  std::function<void(NodeOptions&)> at_the_standby_;
  std::chrono::steady_clock::time_point started;
};

// kill -9 of host 0 mid-run: hosts 1-3 reattach to the standby on host 1, which takes
// over with the lease log it kept, gives host 0's unlisted chunks to the others, and
// ends the job.
TEST_F(StandbyTakeover, Host0KilledTheStandbyTakesOverAndTheOthersFinishTheJob) {
  StartAndSignalHost0(SIGKILL);
  EXPECT_NE(nodes[0]->Wait(seconds(10)), 0);
  ExpectTheOthersFinish();
  PrintAgainstUninterrupted("host 0 killed, the standby took over (3 s heartbeat timeout)");
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// SIGTERM to host 0 (a preemption notice): it drains, listing what is whole, and
// hands the job over at once; the standby takes over without waiting for any
// timeout, and hosts 1-3 finish the job.
TEST_F(StandbyTakeover, Host0SignalledHandsTheJobOverAndTheOthersFinishIt) {
  StartAndSignalHost0(SIGTERM);
  EXPECT_EQ(nodes[0]->Wait(seconds(30)), kExitStoppedBySignal) << nodes[0]->err();
  EXPECT_NE(nodes[0]->err().find("the standby coordinator takes the job over"), std::string::npos)
      << nodes[0]->err();
  for (int host = 1; host < kHosts; ++host) {
    EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
  }
  EXPECT_NE(nodes[1]->err().find("host 0 handed the job over"), std::string::npos)
      << nodes[1]->err();
  EXPECT_NE(nodes[1]->err().find("took over the job with 3 of its 3 hosts"), std::string::npos)
      << nodes[1]->err();
  EXPECT_EQ(nodes[1]->err().find("sent nothing for"), std::string::npos) << nodes[1]->err();
  std::printf("4 hosts, 2d, 4800 documents: host 0 signalled and handed over: %.2f s\n",
              SecondsSinceStart());
  // Host 0's command again once the standby finished the job (a requeue, a pod's index
  // started again): the standby's record of the end says so, and it exits 0.
  ActexProcess& again = job.Start(0, kHosts, corpus, "2d");
  EXPECT_EQ(again.Wait(seconds(60)), 0) << again.err();
  EXPECT_NE(again.err().find("the job finished before this node started (" + out +
                             "/host_01/job_finished.json"),
            std::string::npos)
      << again.err();
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// SIGSTOP of host 0 past the heartbeat timeout looks like a lost host 0 to the others
// (or a split network): the standby takes over. When host 0 wakes, its coordinator
// sees, before it reads any message or judges any silence, that it did not run past
// the timeout, and ends instead of handing out chunks the standby's job owns: no
// document is written twice. Its node, which did not run either, judges no silence
// of the coordinator across the freeze: host 0 ends saying it was frozen, whichever of
// its threads runs first, never that it lost itself or its own coordinator.
TEST_F(StandbyTakeover, Host0FrozenPastTheTimeoutIsFencedOffWhenItWakes) {
  StartAndSignalHost0(SIGSTOP);
  ExpectTheOthersFinish();  // may wake host 0 and run the same commands again
  nodes[0]->Signal(SIGCONT);
  EXPECT_NE(nodes[0]->Wait(seconds(30)), 0) << nodes[0]->err();
  const std::string host0 = first_host0_log_.empty() ? nodes[0]->err() : first_host0_log_;
  const size_t ended = host0.rfind("coordinator: ending the job:");
  std::printf("host 0 woke and ended: %s\n",
              host0.substr(ended == std::string::npos ? 0 : ended, 400).c_str());
  EXPECT_NE(host0.find("coordinator: ending the job: host 0 was frozen for"), std::string::npos)
      << host0;
  EXPECT_NE(host0.find("the standby coordinator on host 1 took the job over"), std::string::npos)
      << host0;
  EXPECT_EQ(host0.find("host 0 lost:"), std::string::npos) << host0;
  EXPECT_EQ(host0.find("lost the coordinator"), std::string::npos) << host0;
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// kill -9 of host 0, and host 0's command started again at once (a new machine in
// its place): host 0's address answers no more for the job, so the node finds it at
// --standby-coordinator once the standby took over, its own coordinator steps aside,
// and it takes leases with the others.
TEST_F(StandbyTakeover, Host0KilledAndStartedAgainRejoinsThroughTheStandby) {
  ASSERT_NO_FATAL_FAILURE(StartWithAStandbyAddress());
  nodes[0]->Signal(SIGKILL);
  EXPECT_NE(nodes[0]->Wait(seconds(10)), 0);
  const size_t shards_when_killed = ListedShards(out + "/host_00");
  ActexProcess& back = job.Start(0, kHosts, corpus, "2d", at_the_standby_);
  EXPECT_EQ(back.Wait(seconds(120)), 0) << back.err();
  for (int host = 1; host < kHosts; ++host) {
    EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
  }
  EXPECT_NE(back.err().find("which took the job over, admitted this host"), std::string::npos)
      << back.err();
  EXPECT_NE(nodes[1]->err().find("host 0 is back"), std::string::npos) << nodes[1]->err();
  ExpectListedMoreOnceBack(out + "/host_00", shards_when_killed,
                           "host 0, back through the standby");
  PrintAgainstUninterrupted("host 0 killed and started again, back through the standby");
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// Once the standby runs the job (host 0 signalled, handing it over), a host lost then
// (host 2, kill -9) comes back the same way: its command again says Hello to host 0's
// dead address and to the standby, which lets it take host 2's place once it found
// host 2 lost.
TEST_F(StandbyTakeover, AHostLostAfterTheTakeoverComesBackThroughTheStandby) {
  ASSERT_NO_FATAL_FAILURE(StartWithAStandbyAddress());
  nodes[0]->Signal(SIGTERM);
  EXPECT_EQ(nodes[0]->Wait(seconds(30)), kExitStoppedBySignal) << nodes[0]->err();
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (nodes[1]->err().find("took over the job") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  // A monitor attached to the standby's port sees the job it runs.
  ActexProcess monitor(dir.path() + "/monitor",
                       {"monitor", "tcp://127.0.0.1:" + std::to_string(standby_port_ + 1), "--json",
                        "--timeout", "5"});
  nodes[2]->Signal(SIGKILL);
  EXPECT_NE(nodes[2]->Wait(seconds(10)), 0);
  ActexProcess& back = job.Start(2, kHosts, corpus, "2d", at_the_standby_);
  EXPECT_EQ(back.Wait(seconds(120)), 0) << back.err();
  for (int host : {1, 3}) EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
  EXPECT_NE(back.err().find("which took the job over, admitted this host"), std::string::npos)
      << back.err();
  EXPECT_NE(nodes[1]->err().find("host 2 is back"), std::string::npos) << nodes[1]->err();
  EXPECT_EQ(monitor.Wait(seconds(30)), 3) << monitor.err();  // silent once the job ended
  EXPECT_NE(monitor.out().find(R"("kind":"finished")"), std::string::npos) << monitor.out();
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// A standby that cannot bind (host 1's --bind names no address of its machine) is a
// wrong config on one host, not the job's end: host 1 says so, host 0 runs without a
// standby, and the job completes.
TEST_F(StandbyTakeover, AStandbyThatCannotBindLeavesTheJobWithoutOne) {
  for (int host = 0; host < kHosts; ++host) {
    nodes.push_back(&job.Start(host, kHosts, corpus, "2d", [host](NodeOptions& node) {
      if (host == 1) node.bind_address = "256.0.0.1";
    }));
  }
  for (ActexProcess* node : nodes) EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  EXPECT_NE(nodes[1]->err().find("cannot run the standby coordinator here"), std::string::npos)
      << nodes[1]->err();
  EXPECT_NE(nodes[0]->err().find("published no standby coordinator"), std::string::npos)
      << nodes[0]->err();
  ExpectIdentical(out, single);
}

// kill -9 of the standby's host (host 1): host 0 goes on without a standby. Its
// command started again is the standby once more: host 0 sends it the lease log
// afresh and tells the other nodes where it listens now (its ports are new). Then
// host 0 is killed: the standby takes over and hosts 1-3 finish the job, equal to
// one process to the bit. (A corpus of its own, long enough for both losses.)
TEST(StandbyReturns, AStandbyHostStartedAgainIsTheStandbyAgainAndTakesOverFromHost0) {
  constexpr int kHosts = 4;
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(12000, 48));
  const std::string single = dir.path() + "/single";
  const std::string out = dir.path() + "/out";
  auto extracted = RunExtraction(TinyModelOptions(corpus, single, 1));
  ASSERT_TRUE(extracted) << extracted.error();
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(kHosts, corpus, "2d");
  ASSERT_TRUE(WaitForFirstShard(out + "/host_01", seconds(60))) << nodes[1]->err();
  nodes[1]->Signal(SIGKILL);
  EXPECT_NE(nodes[1]->Wait(seconds(10)), 0);
  ASSERT_TRUE(WaitForLine(*nodes[0], "the job goes on without a standby", seconds(30)))
      << nodes[0]->err();
  ActexProcess& host1 = job.Start(1, kHosts, corpus, "2d");
  ASSERT_TRUE(WaitForLine(*nodes[0], "host 0's loss is survivable again", seconds(30)))
      << nodes[0]->err();
  for (int host : {2, 3}) {
    ASSERT_TRUE(WaitForLine(*nodes[host], "the standby coordinator listens at", seconds(30)))
        << nodes[host]->err();
  }
  ASSERT_FALSE(Metadata(out + "/host_00").value("complete", true)) << "the job ended too soon";
  nodes[0]->Signal(SIGKILL);
  EXPECT_NE(nodes[0]->Wait(seconds(10)), 0);
  const int host1_status = host1.Wait(seconds(120));
  for (int host : {2, 3}) EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
  EXPECT_NE(host1.err().find("took over the job with 3 of its 4 hosts"), std::string::npos)
      << host1.err();
  // Host 0 killed while listing leaves those chunks to its folder: the same commands
  // finish the job.
  const bool waits = host1.err().find("wait for host-0's folder") != std::string::npos;
  EXPECT_EQ(host1_status, waits ? 1 : 0) << host1.err();
  if (waits) {
    ManualJob again(dir);
    for (ActexProcess* node : again.StartAll(kHosts, corpus, "2d")) {
      EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
    }
  }
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// With two hosts there is no standby (one host left cannot tell host 0's loss from a
// split network): host 1 ends naming host 0, keeping what it listed, and the same
// commands finish the job.
TEST_F(StandbyTakeover, Host0KilledInAJobOfTwoEndsItCleanlyAndTheSameCommandsFinishIt) {
  {
    ManualJob two(dir);
    std::vector<ActexProcess*> nodes = two.StartAll(2, corpus, "2d");
    ASSERT_TRUE(WaitForFirstShard(out + "/host_00", seconds(60))) << nodes[0]->err();
    std::this_thread::sleep_for(milliseconds(100));
    nodes[0]->Signal(SIGKILL);
    const auto killed_at = std::chrono::steady_clock::now();
    EXPECT_NE(nodes[1]->Wait(seconds(30)), 0) << nodes[1]->err();
    EXPECT_NE(nodes[1]->err().find("lost the coordinator (host 0)"), std::string::npos)
        << nodes[1]->err();
    // The 3 s heartbeat timeout, and the time to stop and list what is whole.
    EXPECT_LT(std::chrono::steady_clock::now() - killed_at, seconds(15));
  }
  ManualJob again(dir);
  for (ActexProcess* node : again.StartAll(2, corpus, "2d")) {
    EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  }
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

}  // namespace
}  // namespace actex
