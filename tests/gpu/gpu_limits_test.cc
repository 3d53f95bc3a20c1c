// What the GPU refuses, named for the user: a batch past its memory (at a buffer's
// allocation, or before any work once the weights are up, the shards sharing the GPU
// counted together) and a kernel launch past CUDA's limits. Every case skips itself
// where no GPU is usable; built against the CUDA emulator (gpu_emulated_parity_test) it
// runs on the CPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/text.h"
#include "gpu/cuda_shard_device.h"
#include "gpu/kernels/attention.h"
#include "model/decoder_forward.h"
#include "model/model_weights.h"
#include "model/shard_device.h"
#include "model/shard_plan.h"
#include "model/shard_weights.h"
#include "tests/gpu/gpu_available.h"
#include "tests/support/fixture_dirs.h"

namespace actex {
namespace {

// The tiny model's one shard, and what a token of its forward's buffers takes.
class GpuOutOfMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = WhyNoGpu()) GTEST_SKIP() << *why;
    auto opened = ModelWeights::Open(kTinyModelDir);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    weights = std::move(*opened);
    auto planned = PlanShard(weights->config(), 0, 1);
    ASSERT_TRUE(planned.has_value()) << planned.error();
    slice = *planned;
    per_token = ForwardBytesPerToken(weights->config(), slice);
  }

  std::shared_ptr<const ModelWeights> weights;
  ShardSlice slice;
  int64_t per_token = 0;
};

// A batch past the GPU's memory: the allocation of a buffer fails, later steps are
// skipped, and the batch ends with an error that names the flag that sizes it.
TEST_F(GpuOutOfMemory, ABufferPastTheGpusMemoryNamesTheBatchAndItsFlag) {
  const ModelConfig& config = weights->config();
  auto shard = SliceShardWeights(*weights, slice, 0);
  ASSERT_TRUE(shard.has_value()) << shard.error();
  const AttentionHeads heads{.heads = config.heads,
                             .kv_heads = config.kv_heads,
                             .group = config.heads / config.kv_heads,
                             .head_dim = config.head_dim};
  auto device = CudaShardDevices({})(ShardSetup{
      .config = config, .slice = slice, .weights = *shard, .heads = heads, .last_layer = 0});
  ASSERT_TRUE(device.has_value()) << device.error();
  const PackedBatch batch{.token_ids = {1}, .positions = {0}, .sequence_lengths = {1}};
  ASSERT_TRUE((*device)->BeginBatch(batch, 0).has_value());
  (*device)->Reserve(ShardDevice::Buffer::kUp, int64_t{1} << 40);  // 4 TiB of floats
  auto ended = (*device)->EndBatch();
  ASSERT_FALSE(ended.has_value());
  EXPECT_NE(ended.error().find("the forward's buffers of a batch of 1 tokens (--batch-tokens): "
                               "allocating 4398046511104 bytes"),
            std::string::npos)
      << ended.error();
}

// A batch whose forward's buffers cannot fit in what the weights left of the GPU's
// memory is refused as its shard starts, before any work, naming the flag that sizes
// it and the most tokens that fit; a batch that fits starts.
TEST_F(GpuOutOfMemory, ABatchPastTheGpusFreeMemoryIsRefusedAsItsShardStarts) {
  const int64_t past_any_gpu = (int64_t{1} << 40) / per_token;  // 1 TiB of buffers
  const std::string flag = "--batch-tokens " + std::to_string(past_any_gpu);
  auto refused =
      DecoderShard::Create(weights, slice, {{SiteKind::kResidPost, 0}},
                           CudaShardDevices({.batch_tokens = past_any_gpu, .batch_flag = flag}));
  ASSERT_FALSE(refused.has_value());
  const std::string said = "GPU 0: " + flag + ": a batch of " + std::to_string(past_any_gpu) +
                           " tokens needs at least " +
                           BytesText(static_cast<double>(past_any_gpu * per_token)) +
                           " of its memory for the forward's buffers (" +
                           BytesText(static_cast<double>(per_token)) + " a token), more than the ";
  EXPECT_EQ(refused.error().substr(0, said.size()), said) << refused.error();
#ifdef ACTEX_GPU_EMULATED  // all of its 80 GiB are free
  EXPECT_NE(refused.error().find("more than the 80 GiB of 80 GiB left free beside the weights: "
                                 "give at most " +
                                 std::to_string((int64_t{80} << 30) / per_token) + " tokens"),
            std::string::npos)
      << refused.error();
#endif
  auto started = DecoderShard::Create(
      weights, slice, {{SiteKind::kResidPost, 0}},
      CudaShardDevices({.batch_tokens = 4096, .batch_flag = "--batch-tokens 4096"}));
  EXPECT_TRUE(started.has_value()) << started.error();
}

// Two shards on one GPU: the second is refused a batch whose buffers fit alone but not
// beside the first's, naming both; the first shard is not.
TEST_F(GpuOutOfMemory, AShardCountsTheBuffersOfTheShardsBeforeItOnItsGpu) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  size_t free = 0;
  size_t total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  // Three quarters of what fits one shard's buffers: one shard's fit, two do not.
  const int64_t tokens = static_cast<int64_t>(free) / per_token / 4 * 3;
  const std::string flag = "--batch-tokens " + std::to_string(tokens);
  auto make = [&](int earlier) {
    return DecoderShard::Create(weights, slice, {{SiteKind::kResidPost, 0}},
                                CudaShardDevices({.batch_tokens = tokens,
                                                  .batch_flag = flag,
                                                  .earlier_shards = earlier,
                                                  .earlier_bytes_per_token = earlier * per_token}));
  };
  auto first = make(0);
  EXPECT_TRUE(first.has_value()) << first.error();
  first = {};  // its weights leave the GPU
  auto second = make(1);
  ASSERT_FALSE(second.has_value());
  const std::string said =
      "GPU 0: " + flag + ": a batch of " + std::to_string(tokens) + " tokens needs at least " +
      BytesText(static_cast<double>(tokens * 2 * per_token)) +
      " of its memory for the forward's buffers (" + BytesText(static_cast<double>(2 * per_token)) +
      " a token, with the 1 shard(s) before it on this GPU: " +
      BytesText(static_cast<double>(per_token)) + " a token its own), more than the ";
  EXPECT_EQ(second.error().substr(0, said.size()), said) << second.error();
}

// A launch the GPU refuses is the kernel's own error, returned by the function that
// launched it (gpu/kernels/launch.h), which the device keeps under the kernel's name:
// here a grid of 70,000 heads, past the 65,535 blocks CUDA allows along y. Nothing to
// launch is success.
TEST(GpuKernelLaunch, ARefusedLaunchIsTheLaunchingFunctionsError) {
  if (auto why = WhyNoGpu()) GTEST_SKIP() << *why;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const gpu::AttentionShape shape{.heads = 70000, .kv_heads = 1, .group = 70000, .head_dim = 64};
  EXPECT_EQ(gpu::CausalAttention(nullptr, nullptr, nullptr, nullptr, 1, shape, nullptr, nullptr),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // taken by the launch's own check
  EXPECT_EQ(gpu::CausalAttention(nullptr, nullptr, nullptr, nullptr, 0, shape, nullptr, nullptr),
            cudaSuccess);
}
}  // namespace
}  // namespace actex
