// Host 0's coordinator losing its standby, or a standby restarted
// (standby_coordinator_fixture.h): when host 0 goes on without one and when it ends
// the job, and what the standby answers before any takeover.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/whole_file.h"
#include "tests/actors/standby_coordinator_fixture.h"
#include "tests/coordination/coordinator_test_util.h"

namespace actex {
namespace {

using coordinator_test::Collect;
using coordinator_test::MakeHello;
using coordinator_test::SubscribedMonitor;
using coordinator_test::WaitUntil;
using standby_test::AbortFor;
using standby_test::kHosts;
using standby_test::StandbyCoordinatorTest;
using standby_test::Update;
using namespace std::chrono_literals;

// The standby lost (killed) while every host still hears host 0: host 0's
// coordinator goes on without one once the link's connection has been closed for
// the disconnect grace (long before the heartbeat timeout), and holds no answer back
// any more.
TEST_F(StandbyCoordinatorTest, Host0GoesOnWithoutALostStandbyWhileMostHostsHearIt) {
  ASSERT_NO_FATAL_FAILURE(StartAndGrantHost2AChunk(20s, 500ms));
  const std::vector<int> all = {0, 1, 2, 3};

  standby->Kill();
  (*clients[3])->RequestLease({1, -1});
  // Held until the standby is found lost (0.5 s), then answered.
  EXPECT_EQ(AwaitGrant(clients, 3, all, 5000ms).chunk, 1);
  for (int host : all) EXPECT_TRUE((*clients[host])->Service()) << host;
}

// A worker whose process died (its connection closed) just before the standby was
// lost is no host the standby could have taken over with: host 0 still hears most of
// the hosts left (itself and host 2 of hosts 0-2), so it goes on without a standby.
// Counted as in the job, host 3 would have made that two of four, and host 0 would
// have ended a job nothing had split.
TEST_F(StandbyCoordinatorTest, AHostWhoseProcessEndedJustBeforeTheStandbyIsLostCountsForNoSide) {
  ASSERT_NO_FATAL_FAILURE(StartAndGrantHost2AChunk(20s, 500ms));
  const std::vector<int> left = {0, 1, 2};
  // Host 0's coordinator tells its monitors when it finds host 3 lost.
  std::optional<zmq::socket_t> monitor = SubscribedMonitor(*context, primary);
  ASSERT_TRUE(monitor);
  clients[3]->reset();  // host 3's process dies
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (int host : left) (void)(*clients[host])->Service();
        return std::ranges::any_of(Collect(*monitor, 20ms), [](const MonitorEventMessage& event) {
          return event.kind == "lost" && event.host_id == 3;
        });
      },
      5000ms));

  standby->Kill();
  (*clients[2])->RequestLease({1, -1});
  // Held until the standby is found lost (0.5 s), then answered.
  EXPECT_EQ(AwaitGrant(clients, 2, left, 5000ms).chunk, 1);
  for (int host : left) EXPECT_TRUE((*clients[host])->Service()) << host;
}

// The standby killed and its host's command started again at once with the same
// --standby-coordinator address: the new standby binds the same port, so host 0's link
// reconnects and the old standby is never found lost, but its copy starts afresh and
// no update from where the old one stopped fits it. Host 0 sees it hold fewer records
// than were confirmed and sends it the whole log, so an answer held for the standby
// (a draining host's listing or lease, which waited here for the standby's host to be
// found lost and rejoin: up to the whole --drain-timeout) goes out once the new
// standby holds it. The timeouts are a minute away: nothing else releases it.
TEST_F(StandbyCoordinatorTest, ARestartedStandbyAtTheSameAddressGetsTheWholeLogAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartAndGrantHost2AChunk(60s, 60s));
  const std::vector<int> all = {0, 1, 2, 3};

  const std::string endpoint = standby->endpoint();
  standby->Kill();
  CoordinatorOptions restarted = Standby();
  restarted.port = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
  restarted.leases = StandbyLeases();  // the same file, started afresh
  auto again = StartCoordinator(*context, restarted);
  ASSERT_TRUE(again) << again.error();
  ASSERT_EQ(restarted.counters->control_endpoint, endpoint);
  (*clients[3])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 3, all, 20000ms).chunk, 1);
  auto copy = ReadWholeFile(standby_log);
  ASSERT_TRUE(copy) << copy.error();
  for (const char* record : {"granted 0 host-2", "granted 1 host-3"}) {
    EXPECT_NE(copy->find(record), std::string::npos) << record << " in\n" << *copy;
  }
}

// The standby lost while only host 0 and the standby's host still answer: host 0
// may be the lesser side of a split network, and the standby may have taken over
// with the rest, so host 0's coordinator ends the job rather than answer.
TEST_F(StandbyCoordinatorTest, Host0EndsTheJobWhenItLosesTheStandbyAndMostHosts) {
  StartWithAForkedStandby();
  (*clients[0])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 0, {0, 1, 2, 3}).chunk, 0);

  standby->Kill();  // and hosts 2 and 3 fall silent
  (*clients[0])->RequestLease({2, -1});
  std::expected<void, std::string> ended;
  EXPECT_TRUE(WaitUntil(
      [&] {
        (void)(*clients[1])->Service();
        ended = (*clients[0])->Service();
        EXPECT_TRUE((*clients[0])->TakeGrants().empty()) << "answered without its standby";
        return !ended.has_value();
      },
      5000ms));
  ASSERT_FALSE(ended.has_value());
  EXPECT_NE(ended.error().find("the standby may have taken over the job"), std::string::npos)
      << ended.error();
}

// Before any takeover the standby answers only host 0: a Reattach of a host it does
// not know, or of one host 0 no longer counts, is refused, a Hello is left unanswered, and a second
// peer's StandbyUpdate is dropped and counted.
TEST_F(StandbyCoordinatorTest, BeforeATakeoverTheStandbyAnswersOnlyHost0) {
  liveness.heartbeat_timeout = liveness.disconnect_grace = 20s;  // no takeover meanwhile
  zmq::context_t context;
  CoordinatorOptions options = Standby();
  options.leases = StandbyLeases();
  auto standby = StartCoordinator(context, options);
  ASSERT_TRUE(standby) << standby.error();
  const std::string& endpoint = options.counters->control_endpoint;
  zmq::socket_t first(context, zmq::socket_type::dealer);
  first.set(zmq::sockopt::linger, 0);
  first.connect(endpoint);
  ASSERT_TRUE(Send(first, Update(0, "granted 0 host-2", {0, 1, 2, 3})));
  auto confirm = Receive(first, 3000ms);
  ASSERT_TRUE(confirm && *confirm) << "no StandbyConfirm";
  EXPECT_EQ((*confirm)->As<StandbyConfirmMessage>()->records, 1u);

  EXPECT_NE(AbortFor(context, endpoint, ReattachMessage{7, {}, {}})
                .find("does not know it as a host of the job"),
            std::string::npos);
  // A host that host 0 found lost (cut off past the timeout) is told so.
  ASSERT_TRUE(Send(first, Update(1, "granted 1 host-3", {0, 1, 3})));
  auto second = Receive(first, 3000ms);
  ASSERT_TRUE(second && *second) << "no StandbyConfirm";
  EXPECT_NE(AbortFor(context, endpoint, ReattachMessage{2, {}, {}})
                .find("host 0's coordinator still runs the job and no longer counts host 2 in it"),
            std::string::npos);
  // A node that comes is host 0's while host 0 runs the job: no answer here.
  EXPECT_EQ(AbortFor(context, endpoint, MakeHello(2, kHosts)), "");
  EXPECT_EQ(AbortFor(context, endpoint, Update(2, "granted 2 host-3", {0})), "");
  EXPECT_GE(options.counters->unexpected_messages.load(), 1u);
  EXPECT_FALSE(options.counters->took_over.load());
}

}  // namespace
}  // namespace actex
