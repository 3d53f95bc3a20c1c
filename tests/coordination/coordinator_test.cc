#include "coordination/coordinator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "coordination/coordinator_client.h"
#include "tests/coordination/coordinator_test_util.h"

namespace actex {
namespace {

using coordinator_test::ClientOptionsFor;
using coordinator_test::FastOptions;
using coordinator_test::ForEachClient;
using coordinator_test::Hellos;
using coordinator_test::JoinAll;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using coordinator_test::WaitUntil;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;
using namespace std::chrono_literals;

class RendezvousOfHosts : public ::testing::TestWithParam<int> {};

TEST_P(RendezvousOfHosts, EveryNodeGetsTheMergedEndpointTableAndTheJobEndsAfterDone) {
  const int num_hosts = GetParam();
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(num_hosts);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();

  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options), Hellos(num_hosts));
  std::map<std::string, std::string> expected;
  for (int id = 0; id < num_hosts; ++id) {
    expected["ring/replica0/rank" + std::to_string(id)] =
        "tcp://127.0.0.1:" + std::to_string(40000 + id);
  }
  for (const JoinResult& client : clients) {
    ASSERT_TRUE(client.has_value()) << client.error();
    EXPECT_EQ((*client)->endpoints(), expected);
  }
  EXPECT_TRUE(options.counters->welcomed);
  EXPECT_EQ(options.counters->joined_hosts, num_hosts);

  auto done = ForEachClient(clients, [](CoordinatorClient& client, size_t) {
    return client.Barrier(kFinalBarrierName, 5s);
  });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  // Once the final barrier was released the job is over for the node as well.
  for (JoinResult& client : clients) EXPECT_TRUE((*client)->Service().has_value());
  auto finished = (*coordinator)->Join();
  EXPECT_TRUE(finished.has_value()) << finished.error();
  EXPECT_EQ(options.counters->malformed_messages, 0u);
  EXPECT_EQ(options.counters->unexpected_messages, 0u);
}

INSTANTIATE_TEST_SUITE_P(Coordinator, RendezvousOfHosts, ::testing::Values(1, 2, 4));

// Joins `first` and waits until the coordinator admitted them, then joins `late`:
// every result in the order first..., late.
std::vector<JoinResult> JoinInOrder(zmq::context_t& context, const CoordinatorOptions& options,
                                    std::vector<HelloMessage> first, HelloMessage late) {
  std::vector<JoinResult> results;
  for (size_t i = 0; i <= first.size(); ++i) results.emplace_back(std::unexpected("not run"));
  std::vector<std::thread> threads;
  const CoordinatorClientOptions client_options = ClientOptionsFor(options);
  for (size_t i = 0; i < first.size(); ++i) {
    threads.emplace_back(
        [&, i] { results[i] = CoordinatorClient::Join(context, client_options, first[i]); });
  }
  EXPECT_TRUE(WaitUntil([&] { return options.counters->joined_hosts == int(first.size()); }));
  results.back() = CoordinatorClient::Join(context, client_options, late);
  for (std::thread& thread : threads) thread.join();
  return results;
}

// Every node's Join and the coordinator fail with the same reason, which `reason`
// matches (a string: equals; the coordinator's carries the actor's name first).
void ExpectJobRefused(std::vector<JoinResult>& results, Actor& coordinator,
                      const ::testing::Matcher<const std::string&>& reason) {
  auto ended = coordinator.Join();
  ASSERT_FALSE(ended.has_value());
  ASSERT_THAT(ended.error(), StartsWith("coordinator: "));
  const std::string expected = ended.error().substr(std::string("coordinator: ").size());
  EXPECT_THAT(expected, reason);
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_FALSE(results[i].has_value()) << "node " << i << " joined";
    EXPECT_EQ(results[i].error(), expected) << "node " << i;
  }
}

TEST(Coordinator, DifferingFingerprintFieldEndsTheJobNamingHostFieldAndBothValues) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  HelloMessage bad = MakeHello(2, 3);
  bad.fingerprint["--layers"] = "20";
  auto results = JoinInOrder(context, options, {MakeHello(0, 3), MakeHello(1, 3)}, bad);
  ExpectJobRefused(results, **coordinator,
                   "host 2: --layers differs: host 0 has 20,21 but host 2 has 20");
}

TEST(Coordinator, EveryDifferingFieldIsNamedAndAMissingOneSaysSo) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  HelloMessage bad = MakeHello(1, 2);
  bad.fingerprint["--mesh"] = "data=3,model=2";
  bad.fingerprint.erase("--data");
  auto results = JoinInOrder(context, options, {MakeHello(0, 2)}, bad);
  ExpectJobRefused(results, **coordinator,
                   "host 1: --data differs: host 0 has corpus.jsonl but host 1 has (not set); "
                   "--mesh differs: host 0 has data=2,model=3 but host 1 has data=3,model=2");
}

TEST(Coordinator, BeforeHost0JoinsTheFirstHostIsTheReference) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  HelloMessage bad = MakeHello(2, 3);
  bad.fingerprint["--model"] = "ffff";
  auto results = JoinInOrder(context, options, {MakeHello(1, 3)}, bad);
  ExpectJobRefused(results, **coordinator,
                   "host 2: --model differs: host 1 has 0f3a but host 2 has ffff");
}

TEST(Coordinator, Host0JoiningLateCountsAsRightAndTheEarlierHostIsNamed) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  HelloMessage late_host0 = MakeHello(0, 2);
  late_host0.fingerprint["--layers"] = "5";
  auto results = JoinInOrder(context, options, {MakeHello(1, 2)}, late_host0);
  ExpectJobRefused(results, **coordinator,
                   "host 1: --layers differs: host 0 has 5 but host 1 has 20,21");
}

TEST(Coordinator, DuplicateHostIdEndsTheJob) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  auto results = JoinInOrder(context, options, {MakeHello(0, 3), MakeHello(1, 3)}, MakeHello(1, 3));
  ExpectJobRefused(results, **coordinator,
                   MatchesRegex("host 1: two nodes claim --host-id 1: the node at "
                                "127\\.0\\.0\\.1:[0-9]+ joined first, then the node at "
                                "127\\.0\\.0\\.1:[0-9]+"));
}

TEST(Coordinator, NumHostsMismatchEndsTheJob) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  auto results = JoinInOrder(context, options, {MakeHello(0, 2)}, MakeHello(1, 3));
  ExpectJobRefused(results, **coordinator,
                   "host 1: --num-hosts differs: host 0 has 2 but host 1 has 3");
}

TEST(Coordinator, HostIdOutOfRangeOrOtherSoftwareVersionEndsTheJob) {
  {
    zmq::context_t context;
    CoordinatorOptions options = FastOptions(2);
    auto coordinator = StartCoordinator(context, options);
    ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
    auto results = JoinInOrder(context, options, {MakeHello(0, 2)}, MakeHello(2, 2));
    ExpectJobRefused(results, **coordinator,
                     MatchesRegex("host 2: --host-id out of range: this job has 2 host\\(s\\), "
                                  "ids 0 to 1 \\(node at 127\\.0\\.0\\.1:[0-9]+\\)"));
  }
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  HelloMessage newer = MakeHello(1, 2);
  newer.software_version = "actex test 2";
  auto results = JoinInOrder(context, options, {MakeHello(0, 2)}, newer);
  ExpectJobRefused(results, **coordinator,
                   "host 1: software version differs: host 0 has actex test 1 but host 1 has "
                   "actex test 2");
}

TEST(Coordinator, HostsThatNeverJoinAreNamedAtTheDeadline) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(4);
  options.join_timeout = 500ms;
  const auto start = std::chrono::steady_clock::now();
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> results =
      JoinAll(context, ClientOptionsFor(options), {MakeHello(0, 4), MakeHello(2, 4)});
  const auto waited = std::chrono::steady_clock::now() - start;
  ExpectJobRefused(results, **coordinator, "hosts 1, 3 never joined within 0.5 s");
  EXPECT_GE(waited, 450ms);
  EXPECT_LT(waited, 2000ms);
}

TEST(Coordinator, BarrierIsReleasedOnlyWhenEveryHostArrived) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options), Hellos(3));
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();

  // Hosts 0 and 1 arrive; host 2 keeps working (servicing) for a while.
  ASSERT_TRUE((*clients[0])->EnterBarrier("ready").has_value());
  ASSERT_TRUE((*clients[1])->EnterBarrier("ready").has_value());
  const auto until = std::chrono::steady_clock::now() + 400ms;
  while (std::chrono::steady_clock::now() < until) {
    for (JoinResult& client : clients) ASSERT_TRUE((*client)->Service().has_value());
    std::this_thread::sleep_for(10ms);
  }
  for (JoinResult& client : clients) EXPECT_FALSE((*client)->BarrierReleased("ready"));
  // The last arrival releases everyone.
  ASSERT_TRUE((*clients[2])->Barrier("ready", 2s).has_value());
  EXPECT_TRUE(WaitUntil([&] {
    for (JoinResult& client : clients) EXPECT_TRUE((*client)->Service().has_value());
    return (*clients[0])->BarrierReleased("ready") && (*clients[1])->BarrierReleased("ready");
  }));
  // A barrier that never completes ends in a timeout naming it.
  auto alone = (*clients[0])->Barrier("lonely", 300ms);
  ASSERT_FALSE(alone.has_value());
  EXPECT_EQ(alone.error(),
            "barrier 'lonely' was not released within 0.3 s: the coordinator is still waiting "
            "for other hosts");
}

TEST(Coordinator, FailureReportAbortsEveryoneWithTheReason) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options), Hellos(3));
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  auto results = ForEachClient(clients, [](CoordinatorClient& client, size_t i) {
    if (i == 1) client.ReportFailure("out of memory on device 3");
    return client.Barrier("done", 5s);
  });
  for (const auto& result : results) {
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error(), "host 1 failed: out of memory on device 3");
  }
  auto ended = (*coordinator)->Join();
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error(), "coordinator: host 1 failed: out of memory on device 3");
  // The error sticks.
  EXPECT_EQ((*clients[0])->Service().error(), "host 1 failed: out of memory on device 3");
}

// A host at the final barrier has finished its part: when it leaves (a stop signal)
// or dies there, the job is not aborted, even with replicas spanning hosts, and the
// barrier is released once the others arrive.
TEST(Coordinator, AHostLeavingAfterItArrivedAtTheFinalBarrierEndsNothing) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(3);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options), Hellos(3));
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  CoordinatorClient& leaving = **clients[2];
  ASSERT_TRUE(leaving.EnterBarrier("done").has_value());
  leaving.ReportFailure("host 2 stopped by signal 15 at the final barrier, its part complete");
  clients[2]->reset();
  clients.pop_back();
  auto results = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  for (const auto& result : results) EXPECT_TRUE(result.has_value()) << result.error();
  EXPECT_TRUE((*coordinator)->Join().has_value());
}

TEST(Coordinator, StopRequestAbortsEveryNode) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options), Hellos(2));
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  (*coordinator)->RequestStop();
  auto results = ForEachClient(
      clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  for (const auto& result : results) {
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error(), "the coordinator (host 0) was stopped before the job finished");
  }
  EXPECT_FALSE((*coordinator)->Join().has_value());
}

// Stopped during the rendezvous (host 0's node found the job run by its standby), the
// coordinator ends no job that ran, and says so to the node waiting in it.
TEST(Coordinator, StopRequestDuringTheRendezvousSaysNotEveryHostJoined) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  JoinResult alone = std::unexpected("not joined");
  std::thread waits([&] {
    alone = CoordinatorClient::Join(context, ClientOptionsFor(options), MakeHello(1, 2));
  });
  ASSERT_TRUE(WaitUntil([&] { return options.counters->joined_hosts.load() == 1; }));
  (*coordinator)->RequestStop();
  waits.join();
  ASSERT_FALSE(alone.has_value());
  EXPECT_EQ(alone.error(), "the coordinator (host 0) was stopped before every host joined");
  EXPECT_FALSE((*coordinator)->Join().has_value());
}

TEST(Coordinator, NodeMayStartBeforeTheCoordinator) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(1);
  JoinResult client = std::unexpected(std::string("not run"));
  std::thread node([&] {
    client = CoordinatorClient::Join(context, ClientOptionsFor(options), MakeHello(0, 1));
  });
  std::this_thread::sleep_for(300ms);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  node.join();
  ASSERT_TRUE(client.has_value()) << client.error();
  ASSERT_TRUE((*client)->Barrier(kFinalBarrierName, 2s).has_value());
  EXPECT_TRUE((*coordinator)->Join().has_value());
}

}  // namespace
}  // namespace actex
