// What the CUDA device shard refuses, and how it says so: these need no GPU, so they run
// everywhere (tests/gpu/gpu_parity_test.cc has the forward itself).

#include <gtest/gtest.h>

#include <cstdio>

#include "gpu/cuda_shard_device.h"
#include "model/decoder_forward.h"
#include "model/shard_plan.h"
#include "tests/model/model_test_util.h"
#include "tests/support/fixture_dirs.h"

namespace actex {
namespace {

std::expected<std::unique_ptr<DecoderShard>, std::string> CudaShardOf(const std::string& dir) {
  auto weights = ModelWeights::Open(dir);
  EXPECT_TRUE(weights.has_value()) << weights.error();
  auto slice = PlanShard((*weights)->config(), 0, 1);
  return DecoderShard::Create(*weights, *slice, {{SiteKind::kResidPost, 0}}, CudaShardDevices({}));
}

TEST(CudaDevice, WithoutTheCudaBuildEveryShardIsRefusedSayingSo) {
  if (CudaBuilt()) GTEST_SKIP() << "this build has the CUDA device";
  auto shard = CudaShardOf(kTinyModelDir);
  ASSERT_FALSE(shard.has_value());
  EXPECT_NE(shard.error().find("built without CUDA"), std::string::npos) << shard.error();
  EXPECT_NE(shard.error().find("--device cpu"), std::string::npos) << shard.error();
  EXPECT_FALSE(UsableGpuCount().has_value());
}

TEST(CudaDevice, WithoutAUsableGpuTheShardIsRefusedNamingWhy) {
  if (!CudaBuilt()) GTEST_SKIP() << "built without CUDA";
  if (UsableGpuCount().has_value()) GTEST_SKIP() << "this machine has a usable GPU";
  auto shard = CudaShardOf(kTinyModelDir);
  ASSERT_FALSE(shard.has_value());
  EXPECT_NE(shard.error().find("no usable GPU"), std::string::npos) << shard.error();
  std::printf("refused: %s\n", shard.error().c_str());
}

TEST(CudaDevice, FewerThanOneHostThreadIsRefused) {
  auto weights = ModelWeights::Open(kTinyModelDir);
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto slice = PlanShard((*weights)->config(), 0, 1);
  auto shard = DecoderShard::Create(*weights, *slice, {{SiteKind::kResidPost, 0}},
                                    CudaShardDevices({.host_threads = 0}));
  ASSERT_FALSE(shard.has_value());
  if (CudaBuilt()) {
    EXPECT_NE(shard.error().find("host thread"), std::string::npos) << shard.error();
  }
}

}  // namespace
}  // namespace actex
