// --batch-tokens (and --max-seq-len) against the host's memory (actors/batch_memory.h):
// what a batch token takes, counted from the model's shapes, and a batch past the
// memory refused naming the flag and the most that fits.
#include "actors/batch_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/config_reader.h"
#include "tests/support/fixture_dirs.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

class BatchMemory : public testing::Test {
 protected:
  void SetUp() override {
    auto config = LoadModelConfig(kTinyModelDir);
    ASSERT_TRUE(config) << config.error();
    config_ = *config;
    plan_.sites = {{SiteKind::kResidPost, 0}, {SiteKind::kMlpPost, 1}};
    plan_.max_seq_len = 64;
  }
  // One token's float32 buffers of a whole (unsharded) forward, from the shapes: the
  // residual stream, its normed copy and a partial sum [hidden]; queries and attention's
  // output [heads·dim]; keys and values [kv_heads·dim]; gate and up [intermediate].
  int64_t WholeForwardBytes() const {
    const int64_t dim = config_.head_dim;
    return 4 * (3 * config_.hidden + 2 * config_.heads * dim + 2 * config_.kv_heads * dim +
                2 * config_.intermediate);
  }
  int64_t SiteBytes() const { return 4 * (config_.hidden + config_.intermediate); }

  ModelConfig config_;
  ExtractPlan plan_;
};

TEST_F(BatchMemory, ATokenTakesTheForwardsBuffersAndTheSitesCaptured) {
  EXPECT_EQ(HostBytesPerBatchToken(plan_, config_, 1, 1), WholeForwardBytes() + SiteBytes());
  // Two local replicas of one shard: twice everything.
  EXPECT_EQ(HostBytesPerBatchToken(plan_, config_, 2, 1), 2 * (WholeForwardBytes() + SiteBytes()));
  // A GPU holds the forward's buffers; the host only the captures.
  plan_.devices.cuda = true;
  EXPECT_EQ(HostBytesPerBatchToken(plan_, config_, 1, 1), SiteBytes());
}

TEST_F(BatchMemory, TwoShardsSplitTheHeadsAndColumnsButEachKeepsTheStream) {
  // qwen2-tiny has 2 key/value heads, so each of 2 shards holds one: nothing replicated
  // but the [hidden] buffers.
  ASSERT_EQ(config_.kv_heads, 2);
  EXPECT_EQ(HostBytesPerBatchToken(plan_, config_, 2, 2),
            WholeForwardBytes() + 4 * 3 * config_.hidden + SiteBytes());
}

TEST_F(BatchMemory, ABatchPastTheMemoryIsRefusedNamingTheMostThatFits) {
  const int64_t per_token = HostBytesPerBatchToken(plan_, config_, 1, 1);
  const UsableMemory memory{.bytes = int64_t{1} << 30, .what = "this machine's 1 GiB"};
  const int64_t fitting = memory.bytes / per_token;
  EXPECT_TRUE(CheckBatchMemory(plan_, config_, 1, 1, fitting, memory));
  auto refused = CheckBatchMemory(plan_, config_, 1, 1, fitting + 1, memory);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error(),
              HasSubstr("--batch-tokens " + std::to_string(fitting + 1) + ": a batch of " +
                        std::to_string(fitting + 1) + " tokens takes at least 1 GiB"));
  EXPECT_THAT(refused.error(), HasSubstr("more than this machine's 1 GiB: give at most " +
                                         std::to_string(fitting) + " tokens"));
  // A sequence longer than the batch is a batch by itself.
  plan_.max_seq_len = static_cast<int>(fitting + 1);
  refused = CheckBatchMemory(plan_, config_, 1, 1, 8192, memory);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error(), HasSubstr("--max-seq-len " + std::to_string(fitting + 1)));
  // Memory not known: nothing refused.
  EXPECT_TRUE(CheckBatchMemory(plan_, config_, 1, 1, int64_t{1} << 40, UsableMemory{}));
}

}  // namespace
}  // namespace actex
