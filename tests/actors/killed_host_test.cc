// Hosts of a running job killed or signalled, as real `actex` processes on 127.0.0.1:
// the other hosts end within the heartbeat timeout naming it, listed shards stay
// readable, except where no collective crosses hosts (2d): there a lost worker ends only
// its share, and a replica that spans hosts is taken over by the other replica, or
// brought back by its commands run again.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "actors/mesh_plan.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// Every shard listed anywhere under OUT reads back whole, with its listed size.
void ExpectListedShardsComplete(const std::string& out) {
  for (const auto& entry : fs::directory_iterator(out)) {
    if (!entry.is_directory()) continue;  // OUT/.host_NN.lock
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
  friend void PrintTo(const KillCase& kill, std::ostream* os) { *os << kill.name; }
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

INSTANTIATE_TEST_SUITE_P(Kill9, KilledHost,
                         testing::Values(KillCase{"WorkerIn1dMesh", 1, "1d"},
                                         KillCase{"CoordinatorIn2dMesh", 0, "2d"}),
                         [](const testing::TestParamInfo<KillCase>& info) {
                           return info.param.name;
                         });

struct ReplicaLoss {
  std::string name;
  int signal;  // sent to host 3
  friend void PrintTo(const ReplicaLoss& loss, std::ostream* os) { *os << loss.name; }
};

class LostReplica : public testing::TestWithParam<ReplicaLoss> {};

// Replicas that span hosts (data=2,model=2 over 4 hosts: hosts 0-1 and 2-3) lease
// chunks too: host 2 asks, host 3 follows its grants. Host 3 killed, or signalled (it
// cannot drain its replica's batches alone, so it stops where it is), stops host 2,
// naming it, and the other replica takes over their unlisted chunks and finishes the
// job, equal to an uninterrupted job of the same mesh to the bit.
TEST_P(LostReplica, ItsOtherHostStopsAndTheOtherReplicaFinishesTheJob) {
  constexpr int kHosts = 4;
  const std::string mesh = "data=2,model=2";
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(3000, 48));
  struct Ended {
    int status;
    std::string log;
  };
  auto run = [&](const std::string& out,
                 const std::function<void(std::vector<ActexProcess*>&)>& during) {
    ManualJob job(dir);
    std::vector<ActexProcess*> nodes =
        job.StartAll(kHosts, corpus, mesh, [&](NodeOptions& node) { node.extract.out_dir = out; });
    during(nodes);
    std::vector<Ended> ended;
    for (ActexProcess* node : nodes) ended.push_back({node->Wait(seconds(120)), node->err()});
    return ended;
  };
  auto all_succeeded = [](const std::vector<Ended>& hosts) {
    for (const Ended& host : hosts) EXPECT_EQ(host.status, 0) << host.log;
  };
  all_succeeded(run(dir.path() + "/clean", [](auto&) {}));

  const std::string out = dir.path() + "/out";
  const std::vector<Ended> hosts = run(out, [&](std::vector<ActexProcess*>& nodes) {
    ASSERT_TRUE(WaitForFirstShard(out + "/host_02", seconds(60))) << nodes[2]->err();
    nodes[3]->Signal(GetParam().signal);
  });
  EXPECT_EQ(hosts[1].status, 0) << hosts[1].log;
  if (GetParam().signal == SIGTERM) {
    EXPECT_EQ(hosts[3].status, kExitStoppedBySignal) << hosts[3].log;
    EXPECT_NE(hosts[3].log.find("the other replicas take over its replica's chunks"),
              std::string::npos)
        << hosts[3].log;
  }
  EXPECT_NE(hosts[2].status, 0);
  EXPECT_NE(hosts[2].log.find("host 2 stopped with its replica, which lost host 3"),
            std::string::npos)
      << hosts[2].log;
  // Killed while host 2 was listing, its chunks wait for host 2's folder: the same
  // commands then finish the job.
  const bool waited_for_a_folder =
      hosts[0].log.find("wait for host-2's folder") != std::string::npos;
  EXPECT_EQ(hosts[0].status, waited_for_a_folder ? 1 : 0) << hosts[0].log;
  EXPECT_NE(hosts[0].log.find("the job finished without 2 host(s)"), std::string::npos)
      << hosts[0].log;
  if (waited_for_a_folder) {
    std::printf("host 2 was stopped while listing: the same commands finish the job\n");
    all_succeeded(run(out, [](auto&) {}));
  }
  ExpectIdentical(out, dir.path() + "/clean");
  ExpectVerified(dir, out);
}

// Host 3 killed stops host 2 (they share a replica); both commands started again while
// the other replica runs bring the replica back: the two nodes join together, each
// learning the other's new ring ports, take leases, and the job completes with every
// host, equal to an uninterrupted job of the same mesh to the bit. (Host 2 runs the
// standby coordinator, which ends with it: host 0 goes on without one, counting the
// hosts just welcomed among those that hear it.)
TEST(LostReplicaReturns, BothItsCommandsAgainBringItBackAndTheJobCompletes) {
  constexpr int kHosts = 4;
  const std::string mesh = "data=2,model=2";
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(4800, 48));
  const std::string clean = dir.path() + "/clean";
  using WallClock = std::chrono::steady_clock;
  const auto SecondsSince = [](WallClock::time_point start) {
    return std::chrono::duration<double>(WallClock::now() - start).count();
  };
  auto started = WallClock::now();
  {
    ManualJob job(dir);
    for (ActexProcess* node : job.StartAll(
             kHosts, corpus, mesh, [&](NodeOptions& node) { node.extract.out_dir = clean; })) {
      EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
    }
  }
  const double uninterrupted = SecondsSince(started);
  const std::string out = dir.path() + "/out";
  started = WallClock::now();
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(kHosts, corpus, mesh);
  ASSERT_TRUE(WaitForFirstShard(out + "/host_02", seconds(60))) << nodes[2]->err();
  nodes[3]->Signal(SIGKILL);
  EXPECT_NE(nodes[3]->Wait(seconds(10)), 0);
  EXPECT_NE(nodes[2]->Wait(seconds(30)), 0);
  EXPECT_NE(nodes[2]->err().find("host 2 stopped with its replica, which lost host 3"),
            std::string::npos)
      << nodes[2]->err();
  const size_t shards_when_stopped = ListedShards(out + "/host_02");
  ActexProcess& host3 = job.Start(3, kHosts, corpus, mesh);
  ActexProcess& host2 = job.Start(2, kHosts, corpus, mesh);
  for (ActexProcess* node : {nodes[0], nodes[1], &host2, &host3}) {
    EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  }
  const double with_return = SecondsSince(started);
  std::printf(
      "4 hosts, data=2,model=2, 4800 documents: uninterrupted %.2f s; host 3 killed, hosts 2-3 "
      "started again: %.2f s (%.2f x)\n",
      uninterrupted, with_return, with_return / uninterrupted);
  EXPECT_NE(nodes[0]->err().find("hosts 2, 3 come back together"), std::string::npos)
      << nodes[0]->err();
  ExpectListedMoreOnceBack(out + "/host_02", shards_when_stopped, "the replica of hosts 2-3");
  ExpectIdentical(out, clean);
  ExpectVerified(dir, out);
}

INSTANTIATE_TEST_SUITE_P(Losses, LostReplica,
                         testing::Values(ReplicaLoss{"Killed", SIGKILL},
                                         ReplicaLoss{"Signalled", SIGTERM}),
                         [](const testing::TestParamInfo<ReplicaLoss>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace actex
