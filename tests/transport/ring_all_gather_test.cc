#include "transport/ring_all_gather.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/transport/ring_test_util.h"
#include "transport/ring_all_reduce.h"

namespace actex {
namespace {

using ring_test::LinkKind;
using ring_test::MakeRing;
using ring_test::RunMembers;

// Rank r contributes a length of its own (rank 1 contributes nothing at all).
std::vector<float> Contribution(int rank) {
  const size_t length = rank == 1 ? 0 : 3 * rank + 1 + (rank == 3 ? 100000 : 0);
  std::vector<float> values(length);
  for (size_t i = 0; i < length; ++i) values[i] = static_cast<float>(rank * 1000000 + i);
  return values;
}

class RingAllGatherSizes : public ::testing::TestWithParam<ring_test::SizeAndLinkKind> {};

TEST_P(RingAllGatherSizes, EveryMemberGetsAllContributionsInRankOrder) {
  const auto [size, kind] = GetParam();
  zmq::context_t context;
  auto ring = MakeRing(context, "gather", size, kind);
  ASSERT_EQ(ring.size(), static_cast<size_t>(size));
  std::vector<std::vector<std::vector<float>>> gathered(size);
  auto results = RunMembers(size, [&](int rank) {
    const std::vector<float> local = Contribution(rank);
    return RingAllGather(*ring[rank], local, &gathered[rank]);
  });
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_TRUE(results[rank].has_value()) << results[rank].error();
    ASSERT_EQ(gathered[rank].size(), static_cast<size_t>(size));
    for (int owner = 0; owner < size; ++owner) {
      EXPECT_EQ(gathered[rank][owner], Contribution(owner))
          << "rank " << rank << " holds a wrong contribution of rank " << owner;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllLinkKinds, RingAllGatherSizes, ring_test::SizesAndLinkKinds(),
                         ring_test::SizeAndLinkKindName);

TEST(RingAllGather, InterleavesWithAllReduceOverTcpAndInprocLinks) {
  constexpr int kSize = 3;
  zmq::context_t context;
  auto ring = MakeRing(context, "interleaved", kSize, LinkKind::kMixed);
  ASSERT_EQ(ring.size(), static_cast<size_t>(kSize));
  auto results = RunMembers(kSize, [&](int rank) -> std::expected<void, std::string> {
    for (int round = 0; round < 20; ++round) {
      std::vector<float> local(rank + round % 3, static_cast<float>(rank));
      std::vector<std::vector<float>> gathered;
      if (auto done = RingAllGather(*ring[rank], local, &gathered); !done) return done;
      for (int owner = 0; owner < kSize; ++owner) {
        if (gathered[owner] != std::vector<float>(owner + round % 3, static_cast<float>(owner))) {
          return std::unexpected("round " + std::to_string(round) + ": wrong gather");
        }
      }
      std::vector<float> summed(17, static_cast<float>(round));
      if (auto done = RingAllReduce(*ring[rank], summed); !done) return done;
      if (summed != std::vector<float>(17, static_cast<float>(kSize * round))) {
        return std::unexpected("round " + std::to_string(round) + ": wrong sum");
      }
    }
    return {};
  });
  for (const auto& result : results) EXPECT_TRUE(result.has_value()) << result.error();
}

TEST(RingAllGather, RefusesAMissingOutputVector) {
  zmq::context_t context;
  auto ring = MakeRing(context, "null", 1, LinkKind::kInproc);
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_FALSE(RingAllGather(*ring[0], std::vector<float>{1.f}, nullptr).has_value());
}

}  // namespace
}  // namespace actex
