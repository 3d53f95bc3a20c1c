// Leased jobs of several hosts (a 2d mesh: every replica on one host) as real
// `actex node` processes on 127.0.0.1: hosts lost with SIGKILL, hosts coming back,
// hosts added while the job runs, and a job resumed with another host count or mesh.
// In every case the job ends with every document once, equal to one process to the
// bit (within float rounding where the replica width changed), and `actex verify`
// passes.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "actex_process.h"
#include "actors/extraction_summary.h"
#include "actors/node_options.h"
#include "extraction_reader.h"
#include "leased_job_fixture.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class LeasedJob : public LeasedJobFixture {};
class LostHostReturns : public LeasedJobFixture {};
// Hosts 0 and 1 of a 2d job with --max-hosts 3, and host 2 added once host 0 listed a
// shard, all in `job`.
class AddedHost : public LeasedJobFixture {
 protected:
  static void UpToThree(NodeOptions& node) { node.max_hosts = 3; }
  void StartWithAnAddedHost() {
    nodes = job.StartAll(2, corpus, "2d", UpToThree);
    ASSERT_TRUE(WaitForFirstShard(out + "/host_00", seconds(60))) << nodes[0]->err();
    added = &job.Start(2, 2, corpus, "2d", UpToThree);
  }
  ManualJob job{dir};
  std::vector<ActexProcess*> nodes;
  ActexProcess* added = nullptr;
};

struct LossCase {
  std::string name;
  std::vector<int> killed;  // in this order, each once it listed a shard
  friend void PrintTo(const LossCase& loss, std::ostream* os) { *os << loss.name; }
};

class LostHosts : public LeasedJobFixture, public testing::WithParamInterface<LossCase> {};

// In a 2d job chunks are leased, so a worker killed with SIGKILL costs the job only
// its unlisted chunks: the coordinator gives them to the hosts still in the job, which
// finish it, every document once and equal to one process to the bit. Prints the wall
// time against an uninterrupted job of the same hosts.
TEST_P(LostHosts, InA2dJobTheOthersTakeOverTheLostChunksAndFinishTheJob) {
  constexpr int kHosts = 4;
  const std::vector<int>& killed = GetParam().killed;
  using Clock = std::chrono::steady_clock;
  using Nodes = std::vector<ActexProcess*>;
  // Starts every host of a job writing to `out`, runs `during`, waits for them all
  // and returns the job's wall time.
  auto run_job = [&](const std::string& out, const std::function<void(Nodes&)>& during,
                     const std::function<void(Nodes&)>& after) {
    TempDir logs;
    ManualJob job(logs);
    Nodes nodes =
        job.StartAll(kHosts, corpus, "2d", [&](NodeOptions& node) { node.extract.out_dir = out; });
    const auto started = Clock::now();
    during(nodes);
    for (ActexProcess* node : nodes) node->Wait(seconds(120));
    const double wall = std::chrono::duration<double>(Clock::now() - started).count();
    after(nodes);
    return wall;
  };
  auto all_succeeded = [](Nodes& nodes) {
    for (ActexProcess* node : nodes) EXPECT_EQ(node->Wait(seconds(1)), 0) << node->err();
  };
  auto nothing = [](Nodes&) {};
  const double uninterrupted = run_job(dir.path() + "/clean", nothing, all_succeeded);
  std::string host0_log;
  int host0_status = -1;
  const double with_losses = run_job(
      out,
      [&](Nodes& nodes) {
        for (int host : killed) {
          ASSERT_TRUE(WaitForFirstShard(out + "/host_0" + std::to_string(host), seconds(60)))
              << nodes[host]->err();
          std::this_thread::sleep_for(milliseconds(100));  // mid-run, past the first listing
          nodes[host]->Signal(SIGKILL);
        }
        host0_status = nodes[0]->Wait(seconds(120));
        host0_log = nodes[0]->err();
        for (int host = 1; host < kHosts; ++host) {
          if (std::ranges::find(killed, host) != killed.end()) continue;
          EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
        }
      },
      nothing);
  for (int host : killed) {
    EXPECT_FALSE(Metadata(out + "/host_0" + std::to_string(host)).value("complete", true)) << host;
    EXPECT_NE(host0_log.find("host " + std::to_string(host) + " lost"), std::string::npos)
        << host0_log;
  }
  EXPECT_NE(
      host0_log.find("the job finished without " + std::to_string(killed.size()) + " host(s)"),
      std::string::npos)
      << host0_log;
  // A host killed between saying it lists chunks and saying it listed them leaves
  // them to its folder, which only its own command can read: the job then ends
  // naming them, and the same commands finish it.
  const bool waited_for_a_folder =
      host0_log.find("'s folder (it was lost while listing") != std::string::npos;
  EXPECT_EQ(host0_status, waited_for_a_folder ? 1 : 0) << host0_log;
  if (waited_for_a_folder) {
    std::printf("a host was killed while listing: the same commands finish the job\n");
    run_job(out, nothing, all_succeeded);
  }
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
  std::printf(
      "%d hosts, 2d, 4800 documents; uninterrupted %.2f s; with %zu host(s) killed %.2f s "
      "(%.2f x)\n",
      kHosts, uninterrupted, killed.size(), with_losses, with_losses / uninterrupted);
}

INSTANTIATE_TEST_SUITE_P(Kill9, LostHosts,
                         testing::Values(LossCase{"OneWorker", {1}},
                                         LossCase{"TwoWorkersAtDifferentTimes", {2, 3}}),
                         [](const testing::TestParamInfo<LossCase>& info) {
                           return info.param.name;
                         });

// A leased job resumes with another host count: 4 hosts killed mid-run, then 2 hosts
// finish it; what the 4 listed stays, the rest is leased anew, every document once
// and equal to one process to the bit. (Chunks a killed host was listing wait for its
// folder: then the 2 hosts' job says so, and the 4 hosts' commands finish it.)
TEST_F(LeasedJob, KilledWithFourHostsAndFinishedWithTwo) {
  KillAllOnceListed(4, 3);
  // Runs a job of `hosts` hosts over `out`; host 0's exit status.
  auto run = [&](int hosts) {
    ManualJob job(dir);
    std::vector<ActexProcess*> nodes = job.StartAll(hosts, corpus, "2d");
    for (int host = 1; host < hosts; ++host) {
      EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
    }
    const int status = nodes[0]->Wait(seconds(120));
    // A host killed while listing leaves those chunks to its folder, which a job of
    // two hosts does not read: the job says so, and the four hosts' commands finish it.
    const bool waits = nodes[0]->err().find("wait for host-") != std::string::npos;
    EXPECT_EQ(status, waits ? 1 : 0) << nodes[0]->err();
    return status;
  };
  if (run(2) != 0) {
    EXPECT_EQ(run(4), 0);
  }
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// A leased job resumes with another mesh too: killed as 2 hosts of one shard each,
// finished as 2 hosts of two shards each (replicas of model=2). What was listed
// stays; the documents computed now sum over two shards, so they agree with one
// process within float rounding, and the job says so.
TEST_F(LeasedJob, KilledWithOneShardPerHostAndFinishedWithTwo) {
  KillAllOnceListed(2, 1);
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes =
      job.StartAll(2, corpus, "2d", [](NodeOptions& node) { node.extract.shards = 2; });
  for (ActexProcess* node : nodes) EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  EXPECT_NE(nodes[0]->err().find("written by replicas of model=1, this run's are model=2"),
            std::string::npos)
      << nodes[0]->err();
  auto reference = ReadJob(single);
  auto resumed = ReadJob(out);
  ASSERT_EQ(resumed.size(), reference.size());
  for (const auto& [doc, rows] : reference) {
    EXPECT_EQ(resumed[doc].token_ids, rows.token_ids) << doc;
    for (const auto& [site, values] : rows.sites) {
      const Deviation deviation = Compare(resumed[doc].sites[site], values);
      EXPECT_LE(deviation.max_abs_error, 1e-5 * deviation.max_abs_reference) << doc << site;
    }
  }
  EXPECT_EQ(RejectedIds(out), RejectedIds(single));
  ExpectVerified(dir, out);
}

// The same command for a killed host, started again while the job runs, takes the
// lost host's place (once the coordinator found it lost) and finishes its share: the
// job completes without a rerun.
TEST_F(LostHostReturns, InA2dJobTheSameCommandTakesItsPlaceAndTheJobCompletes) {
  constexpr int kHosts = 3;
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(kHosts, corpus, "2d");
  ASSERT_TRUE(WaitForFirstShard(out + "/host_01", seconds(60))) << nodes[1]->err();
  nodes[1]->Signal(SIGKILL);
  EXPECT_NE(nodes[1]->Wait(seconds(10)), 0);
  ActexProcess& returned = job.Start(1, kHosts, corpus, "2d");
  EXPECT_EQ(returned.Wait(seconds(120)), 0) << returned.err();
  for (int host : {0, 2}) EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
  EXPECT_NE(nodes[0]->err().find("host 1 is back"), std::string::npos) << nodes[0]->err();
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// A host added while the job runs (an id from --num-hosts up to --max-hosts) joins it
// and takes leases like the others: the job ends with every document once, equal to
// one process to the bit, part of them in the added host's folder.
TEST_F(AddedHost, StartedWhileTheJobRunsTakesLeasesAndTheJobCompletes) {
  ASSERT_NO_FATAL_FAILURE(StartWithAnAddedHost());
  EXPECT_EQ(added->Wait(seconds(120)), 0) << added->err();
  for (ActexProcess* node : nodes) EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  EXPECT_NE(nodes[0]->err().find("host 2 joined the running job"), std::string::npos)
      << nodes[0]->err();
  const nlohmann::json metadata = Metadata(out + "/host_02");
  ASSERT_FALSE(metadata.is_discarded());
  EXPECT_TRUE(metadata.value("complete", false));
  EXPECT_FALSE(metadata["shards"].empty()) << "the added host wrote nothing";
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// An added host drains alone on a stop signal like any host of a 2d job, and the
// same command brings it back.
TEST_F(AddedHost, SignalledDrainsAloneAndTheSameCommandBringsItBack) {
  ASSERT_NO_FATAL_FAILURE(StartWithAnAddedHost());
  ASSERT_TRUE(WaitForFirstShard(out + "/host_02", seconds(60))) << added->err();
  added->Signal(SIGTERM);
  EXPECT_EQ(added->Wait(seconds(30)), kExitStoppedBySignal) << added->err();
  EXPECT_NE(added->err().find("the hosts still in the job take over its chunks"), std::string::npos)
      << added->err();
  ActexProcess& back = job.Start(2, 2, corpus, "2d", UpToThree);
  EXPECT_EQ(back.Wait(seconds(120)), 0) << back.err();
  for (ActexProcess* node : nodes) EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  EXPECT_NE(nodes[0]->err().find("host 2 is back"), std::string::npos) << nodes[0]->err();
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

// --max-hosts needs hosts that each hold whole replicas: in a 1d job an added host
// could not compute anything alone.
TEST(MaxHosts, WhereReplicasSpanHostsIsRefusedNamingTheMesh) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(30, 24));
  ManualJob job(dir);
  ActexProcess& host0 =
      job.Start(0, 2, corpus, "1d", [](NodeOptions& node) { node.max_hosts = 3; });
  EXPECT_EQ(host0.Wait(seconds(30)), 2) << "refused before any work: " << host0.err();
  EXPECT_NE(
      host0.err().find("--max-hosts 3 needs a leased job whose hosts each hold whole replicas"),
      std::string::npos)
      << host0.err();
  EXPECT_NE(host0.err().find("--mesh 1d"), std::string::npos) << host0.err();
}

// Independent jobs of one corpus (--machine-id M of --total-machines 2), each of two
// hosts, lease only their own chunks (chunk c is machine c % 2's): `actex verify` of
// both jobs' folders finds every document once, each in a folder of its machine.
TEST(LeasedMachines, EachJobLeasesOnlyItsShareOfTheCorpus) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(1200, 48));
  for (int machine : {0, 1}) {
    ManualJob job(dir);
    for (ActexProcess* node : job.StartAll(2, corpus, "2d", [&](NodeOptions& node) {
           node.machine_id = machine;
           node.total_machines = 2;
         })) {
      EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
    }
  }
  for (const char* folder : {"machine_000_host_00", "machine_001_host_01"}) {
    EXPECT_GT(ListedShards(dir.path() + "/out/" + folder), 0u) << folder;
  }
  ExpectVerified(dir, dir.path() + "/out");
}

// A leased folder holds whichever chunks its host was granted: `actex verify` of one
// folder alone checks those, and says that the job's coverage needs the whole output.
TEST(LeasedFolder, VerifiedAloneAnswersForItsOwnChunks) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(300, 24));
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(2, corpus, "2d");
  for (ActexProcess* node : nodes) ASSERT_EQ(node->Wait(seconds(120)), 0) << node->err();
  for (const std::string folder : {"host_00", "host_01"}) {
    ActexProcess verify(dir.path() + "/verify_" + folder,
                        {"verify", dir.path() + "/out/" + folder});
    EXPECT_EQ(verify.Wait(seconds(60)), 0) << verify.out() << verify.err();
    EXPECT_NE(verify.out().find("verify the whole output folder"), std::string::npos)
        << verify.out();
    EXPECT_EQ(verify.out().find("missing ("), std::string::npos) << verify.out();
  }
}

}  // namespace
}  // namespace actex
