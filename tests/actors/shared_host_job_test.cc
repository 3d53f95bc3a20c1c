// Jobs whose hosts hold parts of two replicas, as real `actex node` processes on
// 127.0.0.1: six hosts of two shards, replicas of three (data=4,model=3), so host 1
// holds replica 0's rank 2 and replica 1's rank 0, and host 4 replica 2's rank 2 and
// replica 3's rank 0. Their chunks are leased like any other job's: each replica's
// writer host asks, its other hosts read copies of those grants, and a host of two
// replicas reads both replicas' chunks side by side.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "actex_process.h"
#include "actors/extraction_summary.h"
#include "actors/node_options.h"
#include "extraction_reader.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kHosts = 6;
constexpr const char* kMesh = "data=4,model=3";

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A host's options: two shards, writing to `out`.
std::function<void(NodeOptions&)> TwoShardsWritingTo(const std::string& out) {
  return [out](NodeOptions& node) {
    node.extract.shards = 2;
    node.extract.out_dir = out;
  };
}

// Starts the six hosts writing to `out`.
std::vector<ActexProcess*> StartJob(ManualJob& job, const std::string& corpus,
                                    const std::string& out) {
  return job.StartAll(kHosts, corpus, kMesh, TwoShardsWritingTo(out));
}

// Runs the job uninterrupted into `clean`; its wall time in seconds.
double RunUninterrupted(const TempDir& dir, const std::string& corpus, const std::string& clean) {
  const Clock::time_point started = Clock::now();
  ManualJob job(dir);
  for (ActexProcess* node : StartJob(job, corpus, clean)) {
    EXPECT_EQ(node->Wait(seconds(180)), 0) << node->err();
  }
  return SecondsSince(started);
}

struct HostLoss {
  std::string name;
  int signal;  // sent to host 4
  const char* what;
  friend void PrintTo(const HostLoss& loss, std::ostream* os) { *os << loss.name; }
};

class SharedHostJob : public testing::TestWithParam<HostLoss> {};

// Host 4 killed with SIGKILL, or signalled (it cannot drain its replicas' batches
// alone, so it stops where it is), stops hosts 3 and 5, which share replicas with it;
// replicas 0 and 1 (hosts 0-2) take over their unlisted chunks and finish the job,
// every document once and equal to an uninterrupted job of the same mesh to the bit.
// Prints the wall times.
TEST_P(SharedHostJob, AHostOfTwoReplicasLostStopsItsGroupAndTheOthersFinishTheJob) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(3000, 48));
  const std::string clean = dir.path() + "/clean";
  const double uninterrupted = RunUninterrupted(dir, corpus, clean);
  ExpectVerified(dir, clean);
  // Every replica's writer took chunks: nothing was dealt by turns.
  for (int writer : {0, 1, 3, 4}) {
    EXPECT_GT(ListedShards(clean + "/host_0" + std::to_string(writer)), 0u) << writer;
  }

  const std::string out = dir.path() + "/out";
  const Clock::time_point started = Clock::now();
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = StartJob(job, corpus, out);
  ASSERT_TRUE(WaitForFirstShard(out + "/host_04", seconds(60))) << nodes[4]->err();
  nodes[4]->Signal(GetParam().signal);
  const int status = nodes[4]->Wait(seconds(20));
  if (GetParam().signal == SIGTERM) {
    EXPECT_EQ(status, kExitStoppedBySignal) << nodes[4]->err();
    EXPECT_NE(nodes[4]->err().find("the other replicas take over its replica's chunks"),
              std::string::npos)
        << nodes[4]->err();
  } else {
    EXPECT_NE(status, 0);
  }
  for (int stopped : {3, 5}) {
    EXPECT_NE(nodes[stopped]->Wait(seconds(30)), 0) << nodes[stopped]->err();
    EXPECT_NE(nodes[stopped]->err().find("host " + std::to_string(stopped) +
                                         " stopped with its replica, which lost host 4"),
              std::string::npos)
        << nodes[stopped]->err();
  }
  std::vector<int> statuses;
  for (int host : {0, 1, 2}) statuses.push_back(nodes[host]->Wait(seconds(180)));
  const double interrupted = SecondsSince(started);
  // Lost while host 3 or 4 was listing, their chunks wait for its folder: the job
  // says so, and the same commands finish it.
  const bool waited_for_a_folder = nodes[0]->err().find("'s folder") != std::string::npos;
  for (int host : {0, 1, 2}) {
    EXPECT_EQ(statuses[host], waited_for_a_folder && host == 0 ? 1 : 0) << nodes[host]->err();
  }
  EXPECT_NE(nodes[0]->err().find("the job finished without 3 host(s)"), std::string::npos)
      << nodes[0]->err();
  if (waited_for_a_folder) {
    std::printf("a lost host was listing: the same commands finish the job\n");
    ManualJob again(dir);
    for (ActexProcess* node : StartJob(again, corpus, out)) {
      EXPECT_EQ(node->Wait(seconds(180)), 0) << node->err();
    }
  }
  ExpectIdentical(out, clean);
  ExpectVerified(dir, out);
  std::printf(
      "6 hosts, data=4,model=3: uninterrupted %.2f s; host 4 %s, hosts 0-2 finished "
      "it in %.2f s (%.2fx)\n",
      uninterrupted, GetParam().what, interrupted, interrupted / uninterrupted);
}

INSTANTIATE_TEST_SUITE_P(Host4, SharedHostJob,
                         testing::Values(HostLoss{"Killed", SIGKILL, "killed"},
                                         HostLoss{"Signalled", SIGTERM, "signalled"}),
                         [](const testing::TestParamInfo<HostLoss>& info) {
                           return info.param.name;
                         });

// Host 4 killed stops hosts 3 and 5; the three commands started again while hosts
// 0-2 run bring replicas 2 and 3 back: the three nodes join together, each learning
// the others' new ring ports, take leases, and the job completes with every host,
// equal to an uninterrupted job of the same mesh to the bit. Prints the wall times.
TEST(SharedHostJobReturns, TheThreeHostsOfALostGroupComeBackTogetherAndTheJobCompletes) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(4800, 48));
  const std::string clean = dir.path() + "/clean";
  const double uninterrupted = RunUninterrupted(dir, corpus, clean);
  const std::string out = dir.path() + "/out";
  const Clock::time_point started = Clock::now();
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = StartJob(job, corpus, out);
  ASSERT_TRUE(WaitForFirstShard(out + "/host_04", seconds(60))) << nodes[4]->err();
  nodes[4]->Signal(SIGKILL);
  for (int host : {3, 4, 5}) EXPECT_NE(nodes[host]->Wait(seconds(30)), 0) << nodes[host]->err();
  const size_t shards_when_stopped = ListedShards(out + "/host_04");
  std::vector<ActexProcess*> back;
  for (int host : {5, 3, 4}) {
    back.push_back(&job.Start(host, kHosts, corpus, kMesh, TwoShardsWritingTo(out)));
  }
  for (ActexProcess* node : {nodes[0], nodes[1], nodes[2], back[0], back[1], back[2]}) {
    EXPECT_EQ(node->Wait(seconds(180)), 0) << node->err();
  }
  const double with_return = SecondsSince(started);
  EXPECT_NE(nodes[0]->err().find("hosts 3, 4, 5 come back together"), std::string::npos)
      << nodes[0]->err();
  ExpectListedMoreOnceBack(out + "/host_04", shards_when_stopped, "the replicas of hosts 3-5");
  ExpectIdentical(out, clean);
  ExpectVerified(dir, out);
  std::printf(
      "6 hosts, data=4,model=3: uninterrupted %.2f s; host 4 killed, hosts 3-5 started "
      "again: %.2f s (%.2fx)\n",
      uninterrupted, with_return, with_return / uninterrupted);
}

}  // namespace
}  // namespace actex
