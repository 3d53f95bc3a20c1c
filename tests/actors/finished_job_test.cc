// A node started after its job finished, as real `actex node` processes on 127.0.0.1:
// a Kubernetes Indexed Job starting a lost pod's index again, a Slurm requeue, or a
// host's command run twice. The job's coordinator recorded the end in host 0's folder
// (job_finished.json), so the same command exits 0 at once, saying the job finished,
// whether host 0 still runs or every process of the job is gone; a node of another
// command into the same --out is still refused. Nothing in the output changes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "leased_job_fixture.h"

namespace actex {
namespace {

using std::chrono::seconds;

constexpr int kHosts = 2;
constexpr const char* kFinishedLine = "the job finished before this node started";

// A node that joined would wait for its job this long: far past every Wait below, so
// a late node that waits for its job, instead of reading the record, fails the test.
void WaitLongToJoin(NodeOptions& node) { node.join_timeout = std::chrono::seconds(600); }

class FinishedJob : public LeasedJobFixture {
 protected:
  std::string Record() const { return out + "/host_00/job_finished.json"; }

  // Runs the job of kHosts hosts, 2d, to its end.
  void RunToTheEnd() {
    ManualJob job(dir);
    for (ActexProcess* node : job.StartAll(kHosts, corpus, "2d")) {
      ASSERT_EQ(node->Wait(seconds(120)), 0) << node->err();
    }
    ASSERT_TRUE(std::filesystem::exists(Record()));
  }

  // The folders hold the whole job, unchanged by any late node.
  void ExpectTheJobUnchanged(size_t host0_shards, size_t host1_shards) {
    EXPECT_EQ(ListedShards(out + "/host_00"), host0_shards);
    EXPECT_EQ(ListedShards(out + "/host_01"), host1_shards);
    ExpectIdentical(out, single);
    ExpectVerified(dir, out);
  }
};

// Every process of the job is gone, and nothing answers at the coordinator's address:
// each host's command again (host 0's, which would start a coordinator, and host 1's)
// exits 0 from the record alone, without waiting for a rendezvous.
TEST_F(FinishedJob, LateNodesAfterEveryProcessIsGoneExitZeroWithoutJoining) {
  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  const size_t host0_shards = ListedShards(out + "/host_00");
  const size_t host1_shards = ListedShards(out + "/host_01");
  for (int host = 0; host < kHosts; ++host) {
    ManualJob late(dir);
    ActexProcess& node = late.Start(host, kHosts, corpus, "2d", WaitLongToJoin);
    EXPECT_EQ(node.Wait(seconds(60)), 0) << node.err();
    EXPECT_NE(node.err().find(kFinishedLine), std::string::npos) << node.err();
    EXPECT_NE(node.err().find("host_00/job_finished.json"), std::string::npos) << node.err();
  }
  ExpectTheJobUnchanged(host0_shards, host1_shards);
}

// Host 0 still runs (held right after it recorded the end, before it could exit, its
// coordinator's port still bound): host 1's command again exits 0 without waiting
// for it, and host 0 then ends as it would have.
TEST_F(FinishedJob, LateNodeWhileHost0StillRunsExitsZero) {
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(kHosts, corpus, "2d");
  ASSERT_EQ(nodes[1]->Wait(seconds(120)), 0) << nodes[1]->err();
  // Host 1 left after the final barrier's release, which host 0 records first.
  ASSERT_TRUE(std::filesystem::exists(Record()));
  nodes[0]->Signal(SIGSTOP);
  if (nodes[0]->Poll().has_value()) {
    GTEST_SKIP() << "host 0 exited before it could be held; the test after every process is "
                    "gone covers the rest";
  }
  ManualJob late(dir);
  ActexProcess& node = late.Start(1, kHosts, corpus, "2d", WaitLongToJoin);
  EXPECT_EQ(node.Wait(seconds(60)), 0) << node.err();
  EXPECT_NE(node.err().find(kFinishedLine), std::string::npos) << node.err();
  nodes[0]->Signal(SIGCONT);
  EXPECT_EQ(nodes[0]->Wait(seconds(60)), 0) << nodes[0]->err();
  ExpectTheJobUnchanged(ListedShards(out + "/host_00"), ListedShards(out + "/host_01"));
}

// Another command into the finished job's --out (here --layers 0 where the job had
// 0,1) is not this job's: the record says so, and the folder's resume check refuses
// the node, naming the flag, before it touches anything.
TEST_F(FinishedJob, LateNodeOfAnotherCommandIsRefused) {
  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  const size_t host0_shards = ListedShards(out + "/host_00");
  const size_t host1_shards = ListedShards(out + "/host_01");
  ManualJob late(dir);
  ActexProcess& node = late.Start(1, kHosts, corpus, "2d", [](NodeOptions& options) {
    WaitLongToJoin(options);
    options.extract.layers = {0};
  });
  EXPECT_EQ(node.Wait(seconds(60)), 1) << node.err();
  EXPECT_EQ(node.err().find(kFinishedLine), std::string::npos) << node.err();
  EXPECT_NE(node.err().find("records a job that ran another command (--layers differs: the "
                            "finished job has 0,1 but host 1 has 0"),
            std::string::npos)
      << node.err();
  EXPECT_NE(node.err().find("--layers: "), std::string::npos) << node.err();
  ExpectTheJobUnchanged(host0_shards, host1_shards);
}

}  // namespace
}  // namespace actex
