#include "model/shard_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace actex {
namespace {

using ::testing::HasSubstr;

ModelConfig Qwen05bShape() {
  ModelConfig config;
  config.name = "qwen2.5-0.5b";
  config.hidden = 896, config.intermediate = 4864, config.layers = 24;
  config.heads = 14, config.kv_heads = 2, config.head_dim = 64;
  return config;
}

TEST(PlanShard, SplitsFourteenHeadsOverThreeShardsFiveFiveFour) {
  const ModelConfig config = Qwen05bShape();
  const int expected_heads[3][2] = {{0, 5}, {5, 10}, {10, 14}};
  // Query head h reads KV head h / 7.
  const int expected_kv[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  const int expected_columns[3][2] = {{0, 1622}, {1622, 3243}, {3243, 4864}};
  for (int rank = 0; rank < 3; ++rank) {
    auto slice = PlanShard(config, rank, 3);
    ASSERT_TRUE(slice.has_value()) << slice.error();
    EXPECT_EQ(slice->rank, rank);
    EXPECT_EQ(slice->shards, 3);
    EXPECT_EQ(slice->first_head, expected_heads[rank][0]);
    EXPECT_EQ(slice->end_head, expected_heads[rank][1]);
    EXPECT_EQ(slice->first_kv_head, expected_kv[rank][0]);
    EXPECT_EQ(slice->end_kv_head, expected_kv[rank][1]);
    EXPECT_EQ(slice->first_intermediate, expected_columns[rank][0]);
    EXPECT_EQ(slice->end_intermediate, expected_columns[rank][1]);
  }
}

TEST(PlanShard, EveryShardCountCoversAllHeadsAndColumnsContiguously) {
  const ModelConfig config = Qwen05bShape();
  for (int shards = 1; shards <= 14; ++shards) {
    int next_head = 0, next_column = 0;
    for (int rank = 0; rank < shards; ++rank) {
      auto slice = PlanShard(config, rank, shards);
      ASSERT_TRUE(slice.has_value()) << slice.error();
      EXPECT_EQ(slice->first_head, next_head) << shards;
      EXPECT_EQ(slice->first_intermediate, next_column) << shards;
      const int heads = slice->end_head - slice->first_head;
      const int columns = slice->end_intermediate - slice->first_intermediate;
      // Near-equal: 14 / shards rounded down or up, larger shards first.
      EXPECT_TRUE(heads == 14 / shards || heads == 14 / shards + 1) << shards;
      EXPECT_EQ(heads, 14 / shards + (rank < 14 % shards ? 1 : 0));
      EXPECT_EQ(columns, 4864 / shards + (rank < 4864 % shards ? 1 : 0));
      // The KV range is exactly the KV heads its query heads read.
      EXPECT_EQ(slice->first_kv_head, slice->first_head / 7);
      EXPECT_EQ(slice->end_kv_head, (slice->end_head - 1) / 7 + 1);
      next_head = slice->end_head;
      next_column = slice->end_intermediate;
    }
    EXPECT_EQ(next_head, 14);
    EXPECT_EQ(next_column, 4864);
  }
}

TEST(PlanShard, ReplicatesKvHeadsWhenShardsOutnumberThem) {
  const ModelConfig config = Qwen05bShape();
  for (int rank = 0; rank < 14; ++rank) {
    auto slice = PlanShard(config, rank, 14);
    ASSERT_TRUE(slice.has_value());
    EXPECT_EQ(slice->end_kv_head - slice->first_kv_head, 1);
    EXPECT_EQ(slice->first_kv_head, rank / 7);
  }
}

TEST(PlanShard, RefusesShardCountsOutsideOneToHeads) {
  const ModelConfig config = Qwen05bShape();
  for (int shards : {0, -1, 15}) {
    auto slice = PlanShard(config, 0, shards);
    ASSERT_FALSE(slice.has_value()) << shards;
    EXPECT_THAT(slice.error(), HasSubstr("--shards " + std::to_string(shards)));
    EXPECT_THAT(slice.error(), HasSubstr("14 attention heads"));
  }
  EXPECT_FALSE(PlanShard(config, 3, 3).has_value());
  EXPECT_FALSE(PlanShard(config, -1, 3).has_value());
}

}  // namespace
}  // namespace actex
