// The forward pass over batches (see qwen2_forward_test.cc for sharding and the sites'
// meaning): early stopping, buffer reuse, packed sequences kept apart, and what a bad
// batch, a failed collective or an impossible shard is told.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/decoder_forward.h"
#include "model/shard_plan.h"
#include "tests/model/model_test_util.h"
#include "tests/model/thread_collective.h"
#include "tests/support/fixture_dirs.h"

namespace actex {
namespace {

using test_support::EverySite;
using test_support::MakeBatch;
using test_support::MaxAbs;
using test_support::MaxAbsDifference;
using test_support::OpenOrFail;
using ::testing::HasSubstr;

TEST(DecoderShard, StopsAfterTheDeepestLayerTheSitesNeed) {
  auto weights = OpenOrFail(kTinyModelDir);
  ASSERT_NE(weights, nullptr);
  auto slice = PlanShard(weights->config(), 0, 1);
  ASSERT_TRUE(slice.has_value());
  const PackedBatch batch = MakeBatch({4}, 512, 5);
  const std::vector<std::pair<std::vector<Site>, int>> cases = {
      {{{SiteKind::kEmbed, -1}}, 0},
      {{{SiteKind::kResidPre, 0}}, 0},
      {{{SiteKind::kResidPre, 1}}, 1},
      {{{SiteKind::kAttnOut, 0}}, 1},
      {{{SiteKind::kResidPost, 0}, {SiteKind::kEmbed, -1}}, 1},
      {{{SiteKind::kMlpPost, 1}}, 2},
      {{{SiteKind::kLnFinal, -1}}, 2},
  };
  for (const auto& [sites, layers] : cases) {
    auto shard = DecoderShard::Create(weights, *slice, sites);
    ASSERT_TRUE(shard.has_value()) << shard.error();
    SoloCollective solo;
    std::vector<SiteActivations> captures;
    ASSERT_TRUE((*shard)->Forward(batch, solo, &captures).has_value());
    EXPECT_EQ((*shard)->layers_computed(), layers) << sites[0].HookName();
    ASSERT_EQ(captures.size(), sites.size());
    EXPECT_EQ(captures[0].values.size(), 4u * captures[0].width);
  }
}

TEST(DecoderShard, ReusesBuffersAcrossBatchesOfDifferentSizes) {
  auto weights = OpenOrFail(test_support::TinyBf16FixtureDir());
  ASSERT_NE(weights, nullptr);
  auto slice = PlanShard(weights->config(), 0, 1);
  const std::vector<Site> sites = EverySite(2);
  auto shard = DecoderShard::Create(weights, *slice, sites);
  ASSERT_TRUE(shard.has_value()) << shard.error();
  SoloCollective solo;
  const PackedBatch small = MakeBatch({3, 2}, 512, 6), large = MakeBatch({30, 50}, 512, 7);
  std::vector<SiteActivations> first, again, big;
  ASSERT_TRUE((*shard)->Forward(small, solo, &first).has_value());
  ASSERT_TRUE((*shard)->Forward(large, solo, &big).has_value());
  ASSERT_TRUE((*shard)->Forward(small, solo, &again).has_value());
  ASSERT_EQ(first.size(), again.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].values, again[i].values) << sites[i].HookName();
    EXPECT_EQ(big[i].values.size(), 80u * big[i].width);
  }
}

TEST(DecoderShard, SequencesInABatchDoNotSeeEachOther) {
  auto weights = OpenOrFail(kTinyModelDir);
  ASSERT_NE(weights, nullptr);
  const std::vector<Site> sites = {{SiteKind::kLnFinal, -1}};
  const PackedBatch both = MakeBatch({7, 12}, 512, 8);
  PackedBatch second;
  second.token_ids.assign(both.token_ids.begin() + 7, both.token_ids.end());
  second.positions.assign(both.positions.begin() + 7, both.positions.end());
  second.sequence_lengths = {12};
  const auto packed = test_support::RunShards(weights, 1, sites, both);
  const auto alone = test_support::RunShards(weights, 1, sites, second);
  const std::span<const float> packed_rows(packed[0][0].values.data() + 7 * 64, 12 * 64);
  EXPECT_LE(MaxAbsDifference(packed_rows, alone[0][0].values), 1e-5f * MaxAbs(alone[0][0].values));
}

class FailingCollective final : public Collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::expected<void, std::string> AllReduceSum(std::span<float>) override {
    return std::unexpected("peer 1 timed out");
  }
  std::expected<void, std::string> AllGather(std::span<const float>,
                                             std::vector<std::vector<float>>*) override {
    return std::unexpected("peer 1 timed out");
  }
};

TEST(DecoderShard, ReportsBadBatchesAndCollectiveFailures) {
  auto weights = OpenOrFail(kTinyModelDir);
  ASSERT_NE(weights, nullptr);
  auto slice = PlanShard(weights->config(), 0, 1);
  auto shard = DecoderShard::Create(weights, *slice, {{SiteKind::kResidPost, 0}});
  ASSERT_TRUE(shard.has_value());
  SoloCollective solo;
  std::vector<SiteActivations> captures;

  PackedBatch out_of_vocab = MakeBatch({3}, 512, 9);
  out_of_vocab.token_ids[1] = 512;
  auto result = (*shard)->Forward(out_of_vocab, solo, &captures);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("token id 512"));

  PackedBatch bad_lengths = MakeBatch({3}, 512, 9);
  bad_lengths.sequence_lengths = {2};
  result = (*shard)->Forward(bad_lengths, solo, &captures);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("sum to 2"));

  FailingCollective failing;
  result = (*shard)->Forward(MakeBatch({3}, 512, 9), failing, &captures);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("all-reduce after o_proj of layer 0: peer 1 timed out"));

  test_support::ThreadCollectiveGroup pair(2);
  result = (*shard)->Forward(MakeBatch({3}, 512, 9), pair.member(0), &captures);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("rank 0 of 2"));
}

TEST(DecoderShard, CreateRefusesSitesOutsideTheModelUnplannedSlicesAndNoThreads) {
  auto weights = OpenOrFail(kTinyModelDir);
  ASSERT_NE(weights, nullptr);
  auto slice = PlanShard(weights->config(), 0, 2);
  ASSERT_TRUE(slice.has_value());
  auto shard = DecoderShard::Create(weights, *slice, {{SiteKind::kResidPost, 2}});
  ASSERT_FALSE(shard.has_value());
  EXPECT_THAT(shard.error(), HasSubstr("blocks.2.hook_resid_post"));

  ShardSlice odd = *slice;
  odd.end_intermediate -= 1;
  shard = DecoderShard::Create(weights, odd, {{SiteKind::kResidPost, 0}});
  ASSERT_FALSE(shard.has_value());
  EXPECT_THAT(shard.error(), HasSubstr("PlanShard"));

  shard = DecoderShard::Create(weights, *slice, {{SiteKind::kResidPost, 0}}, 0);
  ASSERT_FALSE(shard.has_value());
  EXPECT_THAT(shard.error(), HasSubstr("at least one thread"));
}

}  // namespace
}  // namespace actex
