// Heartbeats and lost peers, both ways: a node that falls silent or whose process
// dies, and a coordinator that does.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/unix_time.h"
#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "tests/coordination/coordinator_test_util.h"
#include "transport/wire.h"

namespace actex {
namespace {

using coordinator_test::ClientOptionsFor;
using coordinator_test::Collect;
using coordinator_test::FastOptions;
using coordinator_test::ForEachClient;
using coordinator_test::Hellos;
using coordinator_test::JoinAll;
using coordinator_test::JoinedJob;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using coordinator_test::SubscribedMonitor;
using coordinator_test::WaitUntil;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(CoordinatorLiveness, SilentHostIsLostAfterTheHeartbeatTimeout) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  options.liveness.heartbeat_timeout = 600ms;
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options), Hellos(3));
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  const auto joined = Clock::now();
  // Host 2 stays connected but never services its client again (a hung process).
  JoinResult hung = std::move(clients[2]);
  clients.pop_back();
  auto results = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  const auto waited = Clock::now() - joined;
  for (const auto& result : results) {
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error(), "host 2 lost: no message for 0.6 s");
  }
  EXPECT_GE(waited, 500ms);
  EXPECT_LT(waited, 600ms + 2 * options.liveness.heartbeat_interval + 400ms);
  auto ended = (*coordinator)->Join();
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error(), "coordinator: host 2 lost: no message for 0.6 s");
}

// Three independent hosts (every replica on one host).
struct IndependentJob : JoinedJob {
  IndependentJob() : JoinedJob({0, 1, 2}) {}
};

// Two replicas of two hosts each: hosts 0-1 and 2-3.
struct PairedJob : JoinedJob {
  PairedJob() : JoinedJob({0, 0, 1, 1}) {}
};

// Independent hosts: the others' final barrier is
// released without the lost one, and the coordinator then ends naming it.
TEST(CoordinatorLiveness, WithIndependentHostsALostHostEndsOnlyItsOwnShare) {
  IndependentJob job;
  ASSERT_TRUE(job.started());
  std::vector<JoinResult>& clients = job.clients;
  clients.erase(clients.begin() + 1);  // host 1's process dies
  auto results = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 20s); });
  for (const auto& result : results) EXPECT_TRUE(result.has_value()) << result.error();
  auto ended = job.coordinator->Join();
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error(),
            "coordinator: the job finished without 1 host(s), whose shares are not all written "
            "(host 1 lost: its connection closed and it did not come back within 0.3 s); run "
            "every host's command again to finish them");
}

// Hosts sharing a replica form a stop group (here hosts 0-1 and 2-3): host 3 lost
// stops host 2 with an Abort naming it, while hosts 0 and 1 finish, and the
// coordinator then ends naming both.
TEST(CoordinatorLiveness, AHostLostStopsTheOtherHostsOfItsGroupOnly) {
  PairedJob job;
  ASSERT_TRUE(job.started());
  std::vector<JoinResult>& clients = job.clients;
  clients.pop_back();  // host 3's process dies
  auto results = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 20s); });
  EXPECT_TRUE(results[0].has_value()) << results[0].error();
  EXPECT_TRUE(results[1].has_value()) << results[1].error();
  ASSERT_FALSE(results[2].has_value());
  EXPECT_EQ(results[2].error(),
            "host 2 stopped with its replica, which lost host 3 (host 3 lost: its connection "
            "closed and it did not come back within 0.3 s)");
  auto ended = job.coordinator->Join();
  ASSERT_FALSE(ended.has_value());
  EXPECT_THAT(ended.error(), HasSubstr("the job finished without 2 host(s), whose shares are "
                                       "not all written"));
}

// A monitor is told by the coordinator itself which hosts the job went on without and
// why: the lost host, and the host stopped with its replica. Their nodes cannot say it.
TEST(CoordinatorLiveness, MonitorsAreToldOfEveryHostTheJobGoesOnWithout) {
  PairedJob job;
  ASSERT_TRUE(job.started());
  std::optional<zmq::socket_t> monitor = SubscribedMonitor(job.context, job.options);
  ASSERT_TRUE(monitor);
  std::vector<JoinResult>& clients = job.clients;
  const double before = UnixSeconds();
  clients.pop_back();  // host 3's process dies
  auto results = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 20s); });
  std::map<int, MonitorEventMessage> lost;
  for (const MonitorEventMessage& event : Collect(*monitor, 200ms)) {
    if (event.kind == "lost") {
      EXPECT_TRUE(lost.emplace(event.host_id, event).second);
    }
  }
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_EQ(lost[3].message,
            "host 3 lost: its connection closed and it did not come back within "
            "0.3 s");
  EXPECT_EQ(lost[2].message,
            "host 2 stopped with its replica, which lost host 3 (host 3 lost: "
            "its connection closed and it did not come back within 0.3 s)");
  for (const auto& [host, event] : lost) {
    EXPECT_EQ(event.num_hosts, 4);
    EXPECT_EQ(event.docs_done, 0) << "the coordinator knows no host's counters";
    EXPECT_GE(event.unix_seconds, before);
    EXPECT_LE(event.unix_seconds, UnixSeconds());
  }
  EXPECT_FALSE(job.coordinator->Join().has_value());
}

// Hosts 2-3 share a replica: once host 3 was lost (stopping host 2), a node coming for
// host 3 waits for one coming for host 2 (one that gave up waiting is replaced), and
// then both are welcomed together, each with the other's new ring endpoint, pass the
// barriers released before they came, and the job ends in success.
TEST(CoordinatorLiveness, TheHostsOfALostReplicaComeBackTogether) {
  PairedJob job;
  ASSERT_TRUE(job.started());
  std::vector<JoinResult>& clients = job.clients;
  const CoordinatorClientOptions options = ClientOptionsFor(job.options);
  auto ready = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("ready", 5s); });
  for (const auto& result : ready) ASSERT_TRUE(result.has_value()) << result.error();
  clients[3]->reset();  // host 3's process dies
  EXPECT_TRUE(WaitUntil([&] { return !(*clients[2])->Service().has_value(); }));
  clients[2]->reset();  // host 2's node ends, stopped with its replica

  std::vector<HelloMessage> again = {MakeHello(2, 4), MakeHello(3, 4)};
  again[0].endpoints = {{"ring/replica0/rank2", "tcp://127.0.0.1:41002"}};
  again[1].endpoints = {{"ring/replica0/rank3", "tcp://127.0.0.1:41003"}};
  // A node for host 3 that gave up waiting no longer claims its id.
  CoordinatorClientOptions impatient = options;
  impatient.join_timeout = 300ms;
  impatient.join_margin = 0ms;
  EXPECT_FALSE(CoordinatorClient::Join(job.context, impatient, again[1]).has_value());
  std::this_thread::sleep_for(200ms);  // its connection's end reaches the coordinator
  JoinResult host3 = std::unexpected("not joined");
  std::atomic<bool> host3_returned = false;
  std::thread comes_first([&] {
    host3 = CoordinatorClient::Join(job.context, options, again[1]);
    host3_returned = true;
  });
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(host3_returned) << "host 3 joined without host 2";
  JoinResult host2 = CoordinatorClient::Join(job.context, options, again[0]);
  comes_first.join();
  ASSERT_TRUE(host2.has_value()) << host2.error();
  ASSERT_TRUE(host3.has_value()) << host3.error();
  EXPECT_EQ((*host3)->endpoints().at("ring/replica0/rank2"), "tcp://127.0.0.1:41002");
  EXPECT_EQ((*host2)->endpoints().at("ring/replica0/rank3"), "tcp://127.0.0.1:41003");
  EXPECT_EQ((*host2)->endpoints().at("ring/replica0/rank1"), "tcp://127.0.0.1:40001");
  clients[2] = std::move(host2);
  clients[3] = std::move(host3);
  auto done = ForEachClient(clients, [](CoordinatorClient& client, size_t host) {
    if (host < 2) return client.Barrier("done", 5s);
    if (auto passed = client.Barrier("ready", 5s); !passed) return passed;
    return client.Barrier("done", 5s);
  });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  EXPECT_TRUE(job.coordinator->Join().has_value());
}

// The hosts left wait at a barrier for a host that then dies: losing it releases them.
// Host 0 lost (its node is the coordinator's process) still ends the job.
TEST(CoordinatorLiveness, WithIndependentHostsABarrierWaitsOnlyForTheHostsLeft) {
  for (int dying : {1, 0}) {
    SCOPED_TRACE("host " + std::to_string(dying) + " dies");
    IndependentJob job;
    ASSERT_TRUE(job.started());
    std::vector<JoinResult>& clients = job.clients;
    JoinResult doomed = std::move(clients[dying]);
    clients.erase(clients.begin() + dying);
    std::thread dies([&] {
      std::this_thread::sleep_for(200ms);  // the others wait at "ready" by then
      doomed->reset();                     // its process dies
    });
    auto results = ForEachClient(
        clients, [](CoordinatorClient& client, size_t) { return client.Barrier("ready", 20s); });
    dies.join();
    for (const auto& result : results) {
      if (dying != 0) {
        EXPECT_TRUE(result.has_value()) << result.error();
        continue;
      }
      ASSERT_FALSE(result.has_value());
      EXPECT_EQ(result.error(),
                "host 0 lost: its connection closed and it did not come back within 0.3 s");
    }
    if (dying == 0) {
      EXPECT_FALSE(job.coordinator->Join().has_value());
    }
  }
}

// A new node with a lost host's id takes its place while the job runs (at once, or
// once the host is found lost), passes the barriers released before it came, and the
// job then ends in success; one with other settings is refused without ending the job.
TEST(CoordinatorLiveness, WithIndependentHostsANewNodeTakesALostHostsPlace) {
  IndependentJob job;
  ASSERT_TRUE(job.started());
  std::vector<JoinResult>& clients = job.clients;
  auto ready = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("ready", 5s); });
  for (const auto& result : ready) ASSERT_TRUE(result.has_value()) << result.error();
  clients[1]->reset();  // host 1's process dies; the same command starts again at once
  // A node with other settings is refused, alone: the job goes on.
  HelloMessage other = MakeHello(1, 3);
  other.fingerprint["--layers"] = "20";
  JoinResult refused = CoordinatorClient::Join(job.context, ClientOptionsFor(job.options), other);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), "host 1: --layers differs: host 0 has 20,21 but host 1 has 20");
  // So is a node with an id the job never had.
  JoinResult stranger =
      CoordinatorClient::Join(job.context, ClientOptionsFor(job.options), MakeHello(-3, 3));
  ASSERT_FALSE(stranger.has_value());
  EXPECT_THAT(stranger.error(), HasSubstr("has no lost host -3"));
  JoinResult returned =
      CoordinatorClient::Join(job.context, ClientOptionsFor(job.options), MakeHello(1, 3));
  ASSERT_TRUE(returned.has_value()) << returned.error();
  EXPECT_TRUE((*returned)->Barrier("ready", 5s).has_value());  // released before it came
  clients[1] = std::move(returned);
  auto done = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  EXPECT_TRUE(job.coordinator->Join().has_value());
}

TEST(CoordinatorLiveness, CrashedHostIsLostSoonAfterItsConnectionCloses) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  options.liveness.heartbeat_timeout = 10s;  // far beyond the test: the connection tells first
  options.liveness.disconnect_grace = 300ms;
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options), Hellos(3));
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  const auto crashed = Clock::now();
  clients.pop_back();  // host 2's socket closes, as when its process dies
  auto results = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 20s); });
  const auto waited = Clock::now() - crashed;
  for (const auto& result : results) {
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error(),
              "host 2 lost: its connection closed and it did not come back within 0.3 s");
  }
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 2s);
  EXPECT_FALSE((*coordinator)->Join().has_value());
}

}  // namespace
}  // namespace actex
