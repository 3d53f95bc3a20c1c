// A host of a leased job frozen (SIGSTOP) past the heartbeat timeout, as real `actex
// node` processes on 127.0.0.1: the others take it for lost and take over its chunks;
// woken (SIGCONT), it is told so by the coordinator and ends at once naming why, and
// the command it is told to run again rejoins the job, which ends with every document
// once, equal to one process to the bit.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include "actex_process.h"
#include "leased_job_fixture.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::seconds;

class FrozenHost : public LeasedJobFixture {};

TEST_F(FrozenHost, WokenAfterItWasLostEndsNamingWhyAndItsCommandAgainRejoins) {
  constexpr int kHosts = 3;
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(kHosts, corpus, "2d");
  ASSERT_TRUE(WaitForFirstShard(out + "/host_01", seconds(60))) << nodes[1]->err();
  nodes[1]->Signal(SIGSTOP);
  const bool lost = WaitForLine(*nodes[0], "host 1 lost: no message for 3 s", seconds(30));
  nodes[1]->Signal(SIGCONT);
  ASSERT_TRUE(lost) << nodes[0]->err();
  const auto woke = std::chrono::steady_clock::now();
  EXPECT_EQ(nodes[1]->Wait(seconds(30)), 1) << nodes[1]->err();
  // Told at its first heartbeat, not a heartbeat timeout (3 s) later by its own clock.
  EXPECT_LT(std::chrono::steady_clock::now() - woke, seconds(3)) << nodes[1]->err();
  EXPECT_NE(nodes[1]->err().find("host 1 lost: no message for 3 s, and the job went on without "
                                 "it: this process stops here (what it listed stays in the job; "
                                 "the other hosts take the chunks it had not listed). Run host "
                                 "1's command again to rejoin"),
            std::string::npos)
      << nodes[1]->err();
  EXPECT_NE(nodes[0]->err().find("host 1 at 127.0.0.1"), std::string::npos) << nodes[0]->err();
  ActexProcess& rejoined = job.Start(1, kHosts, corpus, "2d");
  EXPECT_EQ(rejoined.Wait(seconds(120)), 0) << rejoined.err();
  for (int host : {0, 2}) EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0) << nodes[host]->err();
  ExpectIdentical(out, single);
  ExpectVerified(dir, out);
}

}  // namespace
}  // namespace actex
