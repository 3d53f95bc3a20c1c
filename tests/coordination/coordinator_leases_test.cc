// Work leases through a real coordinator and real clients: grants, a waiting
// request, a lost host's chunks given to another, the ack before listing.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "coordination/lease_desk.h"
#include "tests/coordination/coordinator_test_util.h"

namespace actex {
namespace {

using coordinator_test::ClientOptionsFor;
using coordinator_test::FastOptions;
using coordinator_test::ForEachClient;
using coordinator_test::JoinAll;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using namespace std::chrono_literals;

// A desk over `chunks` chunks in memory: enough to watch the coordinator use it
// (the real one, with its log, is job_leases.h).
class MemoryDesk : public LeaseDesk {
 public:
  explicit MemoryDesk(int64_t chunks) : chunks_(chunks) {}

  std::expected<void, std::string> Begin(const std::map<std::string, std::string>&) override {
    return {};
  }
  std::expected<void, std::string> Rejoin(int, const std::map<std::string, std::string>&) override {
    return {};
  }
  std::expected<std::optional<int64_t>, std::string> Grant(int host, int64_t) override {
    for (int64_t chunk = 0; chunk < chunks_; ++chunk) {
      if (listed_.contains(chunk) || holder_.contains(chunk)) continue;
      holder_[chunk] = host;
      return chunk;
    }
    return std::nullopt;
  }
  std::expected<bool, std::string> BeginListing(int host,
                                                const std::vector<int64_t>& chunks) override {
    for (int64_t chunk : chunks) {
      if (!holder_.contains(chunk) || holder_[chunk] != host) return false;
    }
    return true;
  }
  std::expected<void, std::string> List(int, const std::vector<int64_t>& chunks) override {
    for (int64_t chunk : chunks) {
      holder_.erase(chunk);
      listed_.insert(chunk);
    }
    return {};
  }
  std::expected<void, std::string> Lose(int host) override {
    std::erase_if(holder_, [host](const auto& held) { return held.second == host; });
    return {};
  }
  bool finished() const override { return static_cast<int64_t>(listed_.size()) == chunks_; }
  bool stalled() const override { return false; }
  std::string Progress() const override { return std::to_string(listed_.size()) + " listed"; }

 private:
  int64_t chunks_;
  std::map<int64_t, int> holder_;
  std::set<int64_t> listed_;
};

// Services `client` until an answer of the coordinator's that `take` collects arrives.
template <typename Answer>
Answer Await(CoordinatorClient& client, std::vector<Answer> (CoordinatorClient::*take)()) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    EXPECT_TRUE(client.Service().has_value());
    std::vector<Answer> answers = (client.*take)();
    if (!answers.empty()) return answers.front();
    std::this_thread::sleep_for(5ms);
  }
  ADD_FAILURE() << "no answer within 10 s";
  return {};
}

LeaseGrantMessage AwaitGrant(CoordinatorClient& client) {
  return Await(client, &CoordinatorClient::TakeGrants);
}

// What a writer does: asks to list `chunks`, and lists them when allowed.
bool List(CoordinatorClient& client, uint64_t request, std::vector<int64_t> chunks) {
  client.ReportListing({request, chunks});
  const bool accepted = Await(client, &CoordinatorClient::TakeListingAcks).accepted;
  if (accepted) client.ReportListed({std::move(chunks)});
  return accepted;
}

TEST(CoordinatorLeases, ALostHostsChunkGoesToTheHostWaitingAndTheJobEndsInSuccess) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  options.stop_groups = {0, 1};
  options.liveness.heartbeat_timeout = 10s;
  options.liveness.disconnect_grace = 300ms;
  options.leases = std::make_shared<MemoryDesk>(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients =
      JoinAll(context, ClientOptionsFor(options), {MakeHello(0, 2), MakeHello(1, 2)});
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  CoordinatorClient& host0 = **clients[0];
  CoordinatorClient& host1 = **clients[1];

  host1.RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(host1).chunk, 0);
  host0.RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(host0).chunk, 1);
  EXPECT_FALSE(List(host0, 1, {0})) << "host 0 does not hold chunk 0";
  EXPECT_TRUE(List(host0, 2, {1}));
  // No chunk is free, but host 1 holds one: the request waits.
  host0.RequestLease({2, -1});
  const LeaseGrantMessage waiting = AwaitGrant(host0);
  EXPECT_EQ(waiting.chunk, -1);
  EXPECT_FALSE(waiting.finished);
  clients[1]->reset();  // host 1's process dies with chunk 0 unlisted
  const LeaseGrantMessage taken_over = AwaitGrant(host0);
  EXPECT_EQ(taken_over.request, 2u);
  EXPECT_EQ(taken_over.chunk, 0);
  EXPECT_TRUE(List(host0, 3, {0}));
  host0.RequestLease({3, -1});
  const LeaseGrantMessage last = AwaitGrant(host0);
  EXPECT_EQ(last.chunk, -1);
  EXPECT_TRUE(last.finished);
  EXPECT_TRUE(host0.Barrier("done", 5s).has_value());
  EXPECT_TRUE((*coordinator)->Join().has_value()) << "every chunk listed without host 1";
}

// Host ids from num_hosts up to max_hosts are added hosts: one that comes during the
// rendezvous waits for it (the job does not wait for it), joins once it completed
// and takes leases; an id beyond max_hosts is refused, and only that node.
TEST(CoordinatorLeases, AnAddedHostJoinsOnceTheRendezvousCompletedAndTakesLeases) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  options.max_hosts = 3;
  options.stop_groups = {0, 1};
  options.leases = std::make_shared<MemoryDesk>(3);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(options),
                                            {MakeHello(2, 2), MakeHello(0, 2), MakeHello(1, 2)});
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  CoordinatorClient& added = **clients[0];
  added.RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(added).chunk, 0);

  auto beyond = CoordinatorClient::Join(context, ClientOptionsFor(options), MakeHello(3, 2));
  ASSERT_FALSE(beyond.has_value());
  EXPECT_TRUE(beyond.error().starts_with(
      "host 3: --host-id out of range: this job takes hosts 0 to 2 (host 0's --max-hosts 3)"))
      << beyond.error();

  EXPECT_TRUE(List(added, 1, {0}));
  for (int host : {1, 2}) {
    CoordinatorClient& client = **clients[host];
    client.RequestLease({1, -1});
    EXPECT_TRUE(List(client, 1, {AwaitGrant(client).chunk}));
  }
  auto results = ForEachClient(clients, [](CoordinatorClient& client, size_t) {
    client.RequestLease({2, -1});
    // A chunk another host is still listing answers "wait" first: the end follows.
    LeaseGrantMessage grant = AwaitGrant(client);
    for (int waits = 0; waits < 3 && grant.chunk < 0 && !grant.finished; ++waits) {
      grant = AwaitGrant(client);
    }
    if (!grant.finished) {
      return std::expected<void, std::string>(std::unexpected("not finished"));
    }
    return client.Barrier("done", 5s);
  });
  for (const auto& result : results) EXPECT_TRUE(result.has_value()) << result.error();
  EXPECT_TRUE((*coordinator)->Join().has_value());
}

}  // namespace
}  // namespace actex
