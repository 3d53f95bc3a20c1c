// The test collective of shards as threads: sums in rank order, and a shard that stops
// releases the peers waiting for it (a test then fails with both errors, not a hang).

#include "tests/model/thread_collective.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace actex::test_support {
namespace {

using ::testing::HasSubstr;

TEST(ThreadCollectiveGroup, SumsEveryRanksContributionForAll) {
  ThreadCollectiveGroup group(3);
  std::vector<std::vector<float>> data = {{1, 2}, {10, 20}, {100, 200}};
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank) {
    threads.emplace_back([&, rank] {
      for (int round = 0; round < 2; ++round) {  // a second meeting after the first
        EXPECT_TRUE(group.member(rank).AllReduceSum(data[rank]));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::vector<float>& sums : data) EXPECT_EQ(sums, (std::vector<float>{333, 666}));
}

TEST(ThreadCollectiveGroup, AShardThatStopsReleasesThePeersWaitingForIt) {
  ThreadCollectiveGroup group(3);
  std::vector<float> data = {1.0f};
  std::expected<void, std::string> waited[2];
  std::vector<std::thread> peers;
  for (int rank = 1; rank < 3; ++rank) {
    peers.emplace_back([&, rank] { waited[rank - 1] = group.member(rank).AllReduceSum(data); });
  }
  group.Abandon(0, "token id 512 is past the vocabulary");
  for (std::thread& peer : peers) peer.join();
  for (const auto& result : waited) {
    ASSERT_FALSE(result);
    EXPECT_THAT(result.error(), HasSubstr("shard 0 stopped: token id 512"));
  }
  std::vector<std::vector<float>> gathered;
  auto later = group.member(1).AllGather(data, &gathered);
  ASSERT_FALSE(later);
  EXPECT_THAT(later.error(), HasSubstr("shard 0 stopped"));
}

}  // namespace
}  // namespace actex::test_support
