// The standby coordinator taking a job over from host 0 (standby_coordinator_fixture.h):
// what it knows of every grant and listing, the nodes that come after, and the feed
// host 0 names.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/whole_file.h"
#include "tests/actors/standby_coordinator_fixture.h"
#include "tests/coordination/coordinator_test_util.h"

namespace actex {
namespace {

using coordinator_test::ClientOptionsFor;
using coordinator_test::Collect;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using coordinator_test::SubscribedMonitor;
using coordinator_test::WaitUntil;
using standby_test::AbortFor;
using standby_test::ForkedCoordinator;
using standby_test::kHosts;
using standby_test::kStandbyHost;
using standby_test::StandbyCoordinatorTest;
using namespace std::chrono_literals;

// Host 0's coordinator killed: hosts 1-3 reattach to the standby, which takes over
// with the copy of the lease log it kept: the chunk host 2 listed stays listed, the
// one host 3 was allowed to list (its report lost with host 0) is listed from what
// host 3 says, and host 0's unlisted chunk goes to the next host that asks.
TEST_F(StandbyCoordinatorTest, TakesOverAKilledHost0KnowingEveryGrantAndListing) {
  ASSERT_NO_FATAL_FAILURE(StartWithAForkedHost0());
  const std::vector<int> all = {0, 1, 2, 3};
  int64_t next = 0;
  for (int host : {2, 3, 1, 0}) {
    (*clients[host])->RequestLease({1, -1});
    EXPECT_EQ(AwaitGrant(clients, host, all).chunk, next++) << host;
  }
  (*clients[2])->ReportListing({1, {0}});
  ASSERT_TRUE(AwaitAck(**clients[2]));
  (*clients[2])->ReportListed({{0}});
  (*clients[3])->ReportListing({1, {1}});
  ASSERT_TRUE(AwaitAck(**clients[3]));

  forked_host0->Kill();
  (*clients[3])->ReportListed({{1}});  // lost with host 0: the reattach says it
  const std::vector<int> others = {1, 2, 3};
  EXPECT_TRUE(AwaitTakeover(clients, others, *standby_options.counters));
  (*clients[2])->RequestLease({2, -1});
  EXPECT_EQ(AwaitGrant(clients, 2, others).chunk, 3) << "host 0's unlisted chunk";
  (*clients[1])->RequestLease({2, -1});
  EXPECT_EQ(AwaitGrant(clients, 1, others).chunk, 4);
  for (int host : others) EXPECT_TRUE((*clients[host])->Service()) << host;
  // A host that did not reattach comes too late to do so, and the job goes on.
  const std::string& endpoint = standby_options.counters->control_endpoint;
  EXPECT_NE(AbortFor(*context, endpoint, ReattachMessage{2, {}, {}})
                .find("after it took over the job without it"),
            std::string::npos);
  for (int host : others) EXPECT_TRUE((*clients[host])->Service()) << host;

  auto copy = ReadWholeFile(standby_log);
  ASSERT_TRUE(copy) << copy.error();
  for (const char* record : {"listed 0 host-2", "listed 1 host-3", "lost host-0",
                             "granted 3 host-2", "granted 4 host-1"}) {
    EXPECT_NE(copy->find(record), std::string::npos) << record << " in\n" << *copy;
  }
}

// A barrier host 0 released stays released after a takeover: a host that enters it
// again (a node that came after the release, whose arrival host 0 died before
// answering) passes it at once, not waiting for hosts that passed it long ago.
TEST_F(StandbyCoordinatorTest, ABarrierHost0ReleasedIsPassedAtOnceAfterTheTakeover) {
  ASSERT_NO_FATAL_FAILURE(StartWithAForkedHost0());
  for (JoinResult& client : clients) ASSERT_TRUE((*client)->EnterBarrier("ready"));
  ASSERT_TRUE(WaitUntil([&] {
    bool all = true;
    for (JoinResult& client : clients) {
      (void)(*client)->Service();
      all = all && (*client)->BarrierReleased("ready");
    }
    return all;
  }));
  // Host 0 tells its standby what it released once every heartbeat interval.
  const auto shipped = std::chrono::steady_clock::now() + 10 * liveness.heartbeat_interval;
  EXPECT_TRUE(WaitUntil([&] {
    for (JoinResult& client : clients) (void)(*client)->Service();
    return std::chrono::steady_clock::now() >= shipped;
  }));

  forked_host0->Kill();
  ASSERT_TRUE((*clients[2])->EnterBarrier("ready"));  // lost with host 0: the reattach resends it
  const std::vector<int> others = {1, 2, 3};
  ASSERT_TRUE(AwaitTakeover(clients, others, *standby_options.counters));
  EXPECT_TRUE(WaitUntil([&] {
    for (int host : others) (void)(*clients[host])->Service();
    return (*clients[2])->BarrierReleased("ready");
  })) << "the standby waits for hosts that passed 'ready' at host 0";
  for (int host : others) EXPECT_TRUE((*clients[host])->Service()) << host;
}

// After a takeover, a node that comes (host 0's command again, on a new machine, or
// an added host) finds the job at the standby's address, host 0's being dead: the
// standby admits it as host 0's rendezvous would, and it takes leases; a node whose
// settings differ from host 0's is refused, naming the flag.
TEST_F(StandbyCoordinatorTest, AfterATakeoverANodeThatComesJoinsThroughTheStandby) {
  ASSERT_NO_FATAL_FAILURE(
      StartWithAForkedHost0([](CoordinatorOptions& primary, CoordinatorOptions& standby) {
        primary.max_hosts = kHosts + 1;
        standby.max_hosts = 0;  // host 1 was not given --max-hosts: host 0's counts
      }));
  const std::string& endpoint = standby_options.counters->control_endpoint;
  (*clients[0])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 0, {0, 1, 2, 3}).chunk, 0);

  forked_host0->Kill();
  const std::vector<int> others = {1, 2, 3};
  ASSERT_TRUE(AwaitTakeover(clients, others, *standby_options.counters));
  CoordinatorClientOptions late = ClientOptionsFor(primary);
  late.standby_endpoint = endpoint;
  std::atomic<bool> joining = true;
  std::thread serve_others([&] {
    while (joining) {
      for (int host : others) (void)(*clients[host])->Service();
      std::this_thread::sleep_for(20ms);
    }
  });
  auto back = CoordinatorClient::Join(*context, late, MakeHello(0, kHosts));
  joining = false;
  serve_others.join();
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE((*back)->with_standby());
  clients[0] = std::move(back);
  (*clients[0])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 0, {0, 1, 2, 3}).chunk, 0) << "host 0's unlisted chunk";

  // An added host (host 0's --max-hosts) joins the same way.
  auto added = CoordinatorClient::Join(*context, late, MakeHello(kHosts, kHosts));
  ASSERT_TRUE(added) << added.error();
  EXPECT_TRUE((*added)->with_standby());
  HelloMessage other = MakeHello(2, kHosts);
  other.fingerprint["--layers"] = "7";
  auto refused = CoordinatorClient::Join(*context, late, other);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), "host 2: --layers differs: host 0 has 20,21 but host 2 has 7");
  for (int host : {0, 1, 2, 3}) EXPECT_TRUE((*clients[host])->Service()) << host;
}

// A standby on ports the kernel picks still has its monitor ports right after its
// control port, and host 0 names its feed to the monitors: one that follows the name
// hears what the nodes publish to the standby (the control port + 2), as it will
// after a takeover.
TEST_F(StandbyCoordinatorTest, Host0NamesTheStandbysFeedWhichFollowsItsControlPort) {
  zmq::context_t context;
  CoordinatorOptions standby_options = Standby();
  standby_options.leases = StandbyLeases();
  auto standby = StartCoordinator(context, standby_options);
  ASSERT_TRUE(standby) << standby.error();
  const std::string control = standby_options.counters->control_endpoint;
  CoordinatorOptions primary = Primary();
  primary.leases = PrimaryLeases();
  auto host0 = StartCoordinator(context, primary);
  ASSERT_TRUE(host0) << host0.error();
  std::optional<zmq::socket_t> monitor = SubscribedMonitor(context, primary);
  ASSERT_TRUE(monitor);
  std::vector<JoinResult> clients = JoinJob(context, primary, control);

  const std::string feed = CoordinatorPortEndpoint(control, kMonitorPortOffset);
  std::vector<MonitorEventMessage> named;
  EXPECT_TRUE(WaitUntil([&] {
    for (const auto& event : Collect(*monitor, 20ms)) {
      if (event.kind == kStandbyEventKind) named.push_back(event);
    }
    return !named.empty();
  })) << "no \"standby\" event from host 0";
  ASSERT_FALSE(named.empty());
  EXPECT_EQ(named.front().host_id, kStandbyHost);
  EXPECT_EQ(named.front().message, feed);
  EXPECT_EQ(named.front().num_hosts, kHosts);

  zmq::socket_t follower(context, zmq::socket_type::sub);
  follower.set(zmq::sockopt::linger, 0);
  follower.set(zmq::sockopt::subscribe, "");
  follower.connect(feed);
  zmq::socket_t node(context, zmq::socket_type::pub);
  node.set(zmq::sockopt::linger, 0);
  node.connect(CoordinatorPortEndpoint(control, kEventsPortOffset));
  MonitorEventMessage progress;
  progress.kind = "progress";
  progress.host_id = 2;
  EXPECT_TRUE(WaitUntil([&] {
    EXPECT_TRUE(Send(node, progress).has_value());
    return !Collect(follower, 20ms).empty();
  })) << "nothing came through the standby's feed at "
      << feed;

  // A monitor that attaches later is told when its subscription arrives.
  zmq::socket_t later = coordinator_test::Monitor(context, primary);
  EXPECT_TRUE(WaitUntil([&] {
    for (const auto& event : Collect(later, 20ms)) {
      if (event.kind == kStandbyEventKind && event.message == feed) return true;
    }
    return false;
  }));
}

}  // namespace
}  // namespace actex
