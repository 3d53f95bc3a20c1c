#include "transport/ring_all_reduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tests/transport/ring_test_util.h"

namespace actex {
namespace {

using ring_test::LinkKind;
using ring_test::MakeRing;
using ring_test::RunMembers;
using ::testing::HasSubstr;

// Integer-valued inputs keep every partial sum exact in float32, so the expected
// result does not depend on the order of additions.
float Input(int rank, size_t index) {
  return static_cast<float>(static_cast<int>((index * 7 + rank * 13) % 1000) - 500);
}

// Runs one all-reduce of `length` floats on a fresh ring and checks every member
// against the exactly computed sum.
void ExpectExactSum(int size, LinkKind kind, size_t length) {
  SCOPED_TRACE(::testing::Message()
               << "size " << size << " " << ring_test::LinkKindName(kind) << " length " << length);
  zmq::context_t context;
  auto ring = MakeRing(context, "sum", size, kind);
  ASSERT_EQ(ring.size(), static_cast<size_t>(size));
  std::vector<std::vector<float>> data(size, std::vector<float>(length));
  std::vector<float> expected(length, 0.f);
  for (int rank = 0; rank < size; ++rank) {
    for (size_t i = 0; i < length; ++i) {
      data[rank][i] = Input(rank, i);
      expected[i] += Input(rank, i);
    }
  }
  auto results = RunMembers(size, [&](int rank) { return RingAllReduce(*ring[rank], data[rank]); });
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_TRUE(results[rank].has_value()) << results[rank].error();
    ASSERT_EQ(data[rank], expected) << "rank " << rank;
  }
}

class RingAllReduceSizes : public ::testing::TestWithParam<ring_test::SizeAndLinkKind> {};

TEST_P(RingAllReduceSizes, EveryMemberGetsTheExactSum) {
  const auto [size, kind] = GetParam();
  const std::vector<size_t> lengths{0, 1, static_cast<size_t>(size - 1), 1000, size_t{1} << 20};
  for (size_t length : lengths) {
    ExpectExactSum(size, kind, length);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(AllLinkKinds, RingAllReduceSizes, ring_test::SizesAndLinkKinds(),
                         ring_test::SizeAndLinkKindName);

TEST(RingAllReduce, ResultIsBitwiseIdenticalOnEveryMemberOverTcpAndInproc) {
  // Random fractions make the sum depend on the order of additions; every member
  // must still end with the same bits.
  constexpr int kSize = 4;
  constexpr size_t kLength = 3 * kRingPieceFloats + 12345;  // several pieces per chunk
  zmq::context_t context;
  auto ring = MakeRing(context, "bits", kSize, LinkKind::kMixed);
  ASSERT_EQ(ring.size(), static_cast<size_t>(kSize));
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<std::vector<float>> data(kSize, std::vector<float>(kLength));
  for (auto& values : data) {
    for (float& value : values) value = normal(random);
  }
  std::vector<double> reference(kLength, 0.0);
  for (const auto& values : data) {
    for (size_t i = 0; i < kLength; ++i) reference[i] += values[i];
  }
  auto results =
      RunMembers(kSize, [&](int rank) { return RingAllReduce(*ring[rank], data[rank]); });
  for (const auto& result : results) ASSERT_TRUE(result.has_value()) << result.error();
  for (int rank = 1; rank < kSize; ++rank) {
    EXPECT_EQ(std::memcmp(data[0].data(), data[rank].data(), kLength * sizeof(float)), 0)
        << "rank " << rank << " differs from rank 0";
  }
  double max_error = 0;
  for (size_t i = 0; i < kLength; ++i) {
    max_error = std::max(max_error, std::abs(data[0][i] - reference[i]));
  }
  RecordProperty("max_error_vs_double", std::to_string(max_error));
  EXPECT_LT(max_error, 1e-5);  // a few float32 roundings of sums of magnitude < 20
}

TEST(RingAllReduce, FixedEndpointsOverTcpWork) {
  constexpr int kSize = 3;
  zmq::context_t context;
  RingOptions options;
  options.ring = "fixed";
  for (int rank = 0; rank < kSize; ++rank)
    options.endpoints.push_back(ring_test::FreeTcpEndpoint());
  std::vector<std::unique_ptr<RingLinks>> ring;
  for (int rank = 0; rank < kSize; ++rank) {
    options.rank = rank;
    auto links = RingLinks::Create(context, options);
    ASSERT_TRUE(links.has_value()) << links.error();
    ring.push_back(std::move(*links));
  }
  std::vector<std::vector<float>> data{{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}};
  auto results =
      RunMembers(kSize, [&](int rank) { return RingAllReduce(*ring[rank], data[rank]); });
  for (int rank = 0; rank < kSize; ++rank) {
    ASSERT_TRUE(results[rank].has_value()) << results[rank].error();
    EXPECT_EQ(data[rank], (std::vector<float>{9.f, 12.f}));
  }
}

TEST(RingAllReduce, ManyOperationsInARowStayInStep) {
  constexpr int kSize = 3;
  zmq::context_t context;
  auto ring = MakeRing(context, "steady", kSize, LinkKind::kInproc);
  ASSERT_EQ(ring.size(), static_cast<size_t>(kSize));
  auto results = RunMembers(kSize, [&](int rank) -> std::expected<void, std::string> {
    for (int op = 0; op < 200; ++op) {
      std::vector<float> values(1 + op % 7, static_cast<float>(rank + op));
      if (auto reduced = RingAllReduce(*ring[rank], values); !reduced) return reduced;
      const float expected = static_cast<float>(3 * op + 0 + 1 + 2);
      for (float value : values) {
        if (value != expected) return std::unexpected("op " + std::to_string(op) + " wrong sum");
      }
    }
    return {};
  });
  for (const auto& result : results) EXPECT_TRUE(result.has_value()) << result.error();
}

TEST(RingAllReduce, TwoRingsInOneContextRunConcurrentlyWithoutMixingOverTcpAndInproc) {
  constexpr int kSize = 3;
  zmq::context_t context;
  auto first = MakeRing(context, "first", kSize, LinkKind::kInproc);
  auto second = MakeRing(context, "second", kSize, LinkKind::kMixed);
  ASSERT_EQ(first.size(), static_cast<size_t>(kSize));
  ASSERT_EQ(second.size(), static_cast<size_t>(kSize));
  auto results = RunMembers(2 * kSize, [&](int member) -> std::expected<void, std::string> {
    const bool in_first = member < kSize;
    RingLinks& links = in_first ? *first[member] : *second[member - kSize];
    const float scale = in_first ? 1.f : 1000.f;
    for (int op = 0; op < 30; ++op) {
      std::vector<float> values(5000, scale * static_cast<float>(links.rank() + 1));
      if (auto reduced = RingAllReduce(links, values); !reduced) return reduced;
      for (float value : values) {
        if (value != scale * 6.f)
          return std::unexpected("rings mixed: got " + std::to_string(value));
      }
    }
    return {};
  });
  for (const auto& result : results) EXPECT_TRUE(result.has_value()) << result.error();
  for (const auto& links : first) EXPECT_EQ(links->dropped_chunks(), 0u);
  for (const auto& links : second) EXPECT_EQ(links->dropped_chunks(), 0u);
}

TEST(RingAllReduce, MembersWithDifferentLengthsGetAnError) {
  zmq::context_t context;
  auto ring = MakeRing(context, "uneven", 2, LinkKind::kInproc, std::chrono::milliseconds(300));
  ASSERT_EQ(ring.size(), 2u);
  std::vector<std::vector<float>> data{std::vector<float>(10, 1.f), std::vector<float>(12, 1.f)};
  auto results = RunMembers(2, [&](int rank) { return RingAllReduce(*ring[rank], data[rank]); });
  ASSERT_FALSE(results[0].has_value());
  ASSERT_FALSE(results[1].has_value());
  EXPECT_THAT(results[0].error() + results[1].error(),
              HasSubstr("every member must reduce a buffer of the same length"));
}

}  // namespace
}  // namespace actex
