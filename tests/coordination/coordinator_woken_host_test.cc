// A host lost by silence whose process still runs (it was frozen, or its network
// split and healed): the coordinator tells it, at its first message, that the job
// went on without it and why, so it stops at once instead of working on what no
// longer counts and later blaming the coordinator. A host lost at the final barrier
// had done its part: it waits there again, or hears that the job finished.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "tests/coordination/coordinator_test_util.h"

namespace actex {
namespace {

using coordinator_test::ClientOptionsFor;
using coordinator_test::ForEachClient;
using coordinator_test::JoinedJob;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Three independent hosts (`job`, taking a host silent for 2 s for lost: long enough
// that the others, unserviced for a moment, are not) pass "ready"; host 1 then stops
// servicing its client (its process frozen), at the final barrier when
// `at_final_barrier`, until the others passed "mid" without it. Returns host 1's
// client, still asleep.
JoinResult FreezeHostOneUntilLost(JoinedJob& job, bool at_final_barrier = false) {
  auto ready = ForEachClient(
      job.clients, [](CoordinatorClient& client, size_t) { return client.Barrier("ready", 5s); });
  for (const auto& result : ready) EXPECT_TRUE(result.has_value()) << result.error();
  JoinResult frozen = std::move(job.clients[1]);
  job.clients.erase(job.clients.begin() + 1);
  if (at_final_barrier) {
    auto entered = (*frozen)->EnterBarrier("done");
    EXPECT_TRUE(entered.has_value()) << entered.error();
  }
  auto mid = ForEachClient(
      job.clients, [](CoordinatorClient& client, size_t) { return client.Barrier("mid", 5s); });
  for (const auto& result : mid) EXPECT_TRUE(result.has_value()) << result.error();
  return frozen;
}

TEST(CoordinatorWokenHost, IsToldAtItsFirstMessageThatTheJobWentOnWithoutIt) {
  JoinedJob job({0, 1, 2}, 2s);
  ASSERT_TRUE(job.started());
  JoinResult frozen = FreezeHostOneUntilLost(job);
  ASSERT_TRUE(frozen.has_value());
  const auto woke = Clock::now();
  auto barrier = (*frozen)->Barrier("mid", 5s);
  ASSERT_FALSE(barrier.has_value());
  EXPECT_EQ(barrier.error(),
            "host 1 lost: no message for 2 s, and the job went on without it: this process "
            "stops here (what it listed stays in the job). Run host 1's command again to "
            "rejoin");
  // Not a heartbeat timeout later, taking the coordinator for lost.
  EXPECT_LT(Clock::now() - woke, 1s);
  auto done = ForEachClient(
      job.clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  auto ended = job.coordinator->Join();
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error(),
            "coordinator: the job finished without 1 host(s), whose shares are not all written "
            "(host 1 lost: no message for 2 s); run every host's command again to finish them");
}

// Host 1's client serviced until the final barrier's release reached it.
std::expected<void, std::string> AwaitFinalRelease(CoordinatorClient& client) {
  const auto deadline = Clock::now() + 5s;
  while (!client.BarrierReleased("done")) {
    if (Clock::now() >= deadline) return std::unexpected("no release within 5 s");
    if (auto serviced = client.Service(); !serviced) return serviced;
    std::this_thread::sleep_for(10ms);
  }
  return {};
}

TEST(CoordinatorWokenHost, LostAtTheFinalBarrierWaitsThereAgainWhileTheJobRuns) {
  JoinedJob job({0, 1, 2}, 2s);
  ASSERT_TRUE(job.started());
  JoinResult frozen = FreezeHostOneUntilLost(job, /*at_final_barrier=*/true);
  ASSERT_TRUE(frozen.has_value());
  // Woken: its next heartbeat takes it back to the barrier, which now waits for it.
  std::expected<void, std::string> woken;
  std::thread wake([&] { woken = AwaitFinalRelease(**frozen); });
  std::this_thread::sleep_for(500ms);
  auto done = ForEachClient(
      job.clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  wake.join();
  EXPECT_TRUE(woken.has_value()) << woken.error();
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  // Every host finished its part: the job ended well.
  auto ended = job.coordinator->Join();
  EXPECT_TRUE(ended.has_value()) << ended.error();
}

TEST(CoordinatorWokenHost, LostAtTheFinalBarrierHearsThatTheJobFinished) {
  // Host 1 wakes while the coordinator still answers late peers.
  JoinedJob job({0, 1, 2}, 2s, [](CoordinatorOptions& options) { options.final_drain = 3s; });
  ASSERT_TRUE(job.started());
  JoinResult frozen = FreezeHostOneUntilLost(job, /*at_final_barrier=*/true);
  ASSERT_TRUE(frozen.has_value());
  auto done = ForEachClient(
      job.clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  auto woken = AwaitFinalRelease(**frozen);
  EXPECT_TRUE(woken.has_value()) << woken.error();
  auto ended = job.coordinator->Join();
  EXPECT_TRUE(ended.has_value()) << ended.error();
}

TEST(CoordinatorWokenHost, IsToldThatAnotherNodeTookItsPlace) {
  JoinedJob job({0, 1, 2}, 2s);
  ASSERT_TRUE(job.started());
  JoinResult frozen = FreezeHostOneUntilLost(job);
  ASSERT_TRUE(frozen.has_value());
  JoinResult replacement =
      CoordinatorClient::Join(job.context, ClientOptionsFor(job.options), MakeHello(1, 3));
  ASSERT_TRUE(replacement.has_value()) << replacement.error();
  auto barrier = (*frozen)->Barrier("mid", 5s);
  ASSERT_FALSE(barrier.has_value());
  EXPECT_EQ(barrier.error(),
            "host 1 was found lost and another node took its place in the job; this process "
            "stops here");
  job.clients.insert(job.clients.begin() + 1, std::move(replacement));
  auto done = ForEachClient(
      job.clients, [](CoordinatorClient& client, size_t) { return client.Barrier("done", 5s); });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  EXPECT_TRUE(job.coordinator->Join().has_value());
}

}  // namespace
}  // namespace actex
