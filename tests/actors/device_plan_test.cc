// --device, --gpus and --precision: what each host's shards run on, and what is refused
// before any work (the GPU ones are checked for real where a GPU is usable; bf16 on the
// CPU where it has AVX512_BF16, its refusal elsewhere).

#include "actors/device_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "actors/extract_options.h"
#include "gpu/cuda_shard_device.h"
#include "model/decoder_forward.h"
#include "model/kernels/cpu_isa.h"
#include "model/model_weights.h"
#include "model/shard_plan.h"

namespace actex {
namespace {

// `plan` is a refusal whose message holds `text`.
void ExpectRefusedSaying(const std::expected<DevicePlan, std::string>& plan,
                         const std::string& text) {
  ASSERT_FALSE(plan.has_value());
  EXPECT_NE(plan.error().find(text), std::string::npos) << plan.error();
}

TEST(DevicePlan, TheDefaultIsTheCpuInFloat32) {
  auto plan = PlanDevices("cpu", "", "fp32");
  ASSERT_TRUE(plan.has_value()) << plan.error();
  EXPECT_FALSE(plan->cuda);
  EXPECT_EQ(plan->precision, Precision::kFp32);
  EXPECT_EQ(plan->Describe(), "cpu, fp32");
  EXPECT_FALSE(plan->Warning().has_value());
}

TEST(DevicePlan, Bf16OnTheCpuIsAcceptedWhereSupportedElseRefusedNamingWhy) {
  auto plan = PlanDevices("cpu", "", "bf16");
  if (auto supported = Bf16ProductsSupported(); !supported) {
    ASSERT_FALSE(plan.has_value());
    EXPECT_EQ(plan.error(), "--precision bf16 with --device cpu: " + supported.error());
    return;
  }
  ASSERT_TRUE(plan.has_value()) << plan.error();
  EXPECT_EQ(plan->precision, Precision::kBf16);
  EXPECT_EQ(plan->Describe(), "cpu, bf16 products by oneDNN on " + Bf16ProductUnits());
  EXPECT_EQ(plan->Warning(), Bf16SpeedWarning(CpuVendor(), CpuModelName(), Bf16ProductUnits()));
}

TEST(DevicePlan, TheCpuMakerCarriesThePrecisionToTheShard) {
  auto weights = ModelWeights::Open(ACTEX_FIXTURES_DIR "/qwen2-tiny");
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto slice = PlanShard((*weights)->config(), 0, 1);
  ASSERT_TRUE(slice.has_value()) << slice.error();
  for (const std::string precision : {"fp32", "bf16"}) {
    auto plan = PlanDevices("cpu", "", precision);
    if (!plan) continue;  // bf16 where unsupported: the refusal is tested above
    auto shard = DecoderShard::Create(*weights, *slice, {{SiteKind::kResidPost, 0}},
                                      plan->MakerFor(0, 2, {256, "--batch-tokens 256"}, {}));
    ASSERT_TRUE(shard.has_value()) << shard.error();
    EXPECT_NE((*shard)->device_description().find(precision == "bf16" ? "bf16 products" : "fp32"),
              std::string::npos)
        << (*shard)->device_description();
  }
}

TEST(DevicePlan, AnUnknownDeviceOrPrecisionIsRefusedNamingTheFlag) {
  ExpectRefusedSaying(PlanDevices("tpu", "", "fp32"), "--device tpu");
  ExpectRefusedSaying(PlanDevices("cpu", "", "fp8"), "--precision");
}

TEST(DevicePlan, GpusWithoutCudaAreRefused) {
  ExpectRefusedSaying(PlanDevices("cpu", "0,1", "fp32"), "--gpus 0,1: only with --device cuda");
}

TEST(DevicePlan, CudaWithoutAUsableGpuIsRefusedSayingWhy) {
  if (UsableGpuCount().has_value()) GTEST_SKIP() << "this machine has a usable GPU";
  auto plan = PlanDevices("cuda", "", "fp32");
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().rfind("--device cuda: ", 0), 0u) << plan.error();
  EXPECT_NE(plan.error().find(CudaBuilt() ? "no usable GPU" : "built without CUDA"),
            std::string::npos)
      << plan.error();
}

TEST(DevicePlan, GpusAreTakenInTurnAndEachIndexIsChecked) {
  auto gpus = UsableGpuCount();
  if (!gpus) GTEST_SKIP() << gpus.error();
  auto all = PlanDevices("cuda", "", "bf16");
  ASSERT_TRUE(all.has_value()) << all.error();
  EXPECT_EQ(static_cast<int>(all->gpus.size()), *gpus);
  EXPECT_EQ(all->precision, Precision::kBf16);
  ExpectRefusedSaying(PlanDevices("cuda", std::to_string(*gpus), "fp32"), "is not a GPU CUDA sees");
  ExpectRefusedSaying(PlanDevices("cuda", "0,0", "fp32"), "given twice");
}

// A host's shards take its GPUs in turn; each is checked with the forward buffers of
// the shards made on its GPU before it.
TEST(DevicePlan, EachGpuShardCountsTheBuffersOfTheShardsBeforeItOnItsGpu) {
  DevicePlan plan{.cuda = true, .gpus = {3, 5}, .precision = Precision::kBf16};
  const LargestBatch batch{4096, "--batch-tokens 4096"};
  const std::vector<int64_t> bytes_per_token = {100, 200, 300, 400, 500};
  const std::vector<int> gpu = {3, 5, 3, 5, 3};
  const std::vector<int> earlier = {0, 0, 1, 1, 2};
  const std::vector<int64_t> earlier_bytes = {0, 0, 100, 200, 400};
  for (int shard = 0; shard < 5; ++shard) {
    const CudaOptions options = plan.CudaOptionsFor(shard, 2, batch, bytes_per_token);
    EXPECT_EQ(options.gpu, gpu[shard]) << shard;
    EXPECT_EQ(options.earlier_shards, earlier[shard]) << shard;
    EXPECT_EQ(options.earlier_bytes_per_token, earlier_bytes[shard]) << shard;
    EXPECT_EQ(options.precision, Precision::kBf16);
    EXPECT_EQ(options.host_threads, 2);
    EXPECT_EQ(options.batch_tokens, 4096);
    EXPECT_EQ(options.batch_flag, "--batch-tokens 4096");
  }
}

// A thread count per local replica: one on the CPU; with --device cuda the cores
// divided by `share`, 1 to `most`, and for more replicas on the host never more each,
// never none.
void ExpectPerReplicaDefault(int (*threads)(const DevicePlan&, int), int share, int most) {
  DevicePlan cpu;
  EXPECT_EQ(threads(cpu, 1), 1);
  DevicePlan cuda;
  cuda.cuda = true;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int one_replica = threads(cuda, 1);
  EXPECT_EQ(one_replica, std::clamp(cores / share, 1, most));
  EXPECT_LE(threads(cuda, 8), one_replica);
  EXPECT_EQ(threads(cuda, 1000), 1);
}

TEST(DevicePlan, TokenizerThreadsAreOneOnTheCpuAndSeveralPerGpuReplicaAtMostFour) {
  ExpectPerReplicaDefault(DefaultTokenizerThreads, 4, 4);
}

TEST(DevicePlan, SpillThreadsAreOneOnTheCpuAndHalfTheCoresPerGpuReplicaAtMostEight) {
  ExpectPerReplicaDefault(DefaultSpillThreads, 2, 8);
}

}  // namespace
}  // namespace actex
