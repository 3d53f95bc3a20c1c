// --device / --precision on the CPU: bf16 accepted where the CPU can run bfloat16
// products (AVX512_BF16, not ACTEX_ISA=avx2), refused naming why elsewhere, and carried
// to the shards' devices.

#include "actors/device_plan.h"

#include <gtest/gtest.h>

#include "model/decoder_forward.h"
#include "model/kernels/cpu_isa.h"
#include "model/model_weights.h"
#include "model/shard_plan.h"

namespace actex {
namespace {

TEST(PlanDevices, Fp32OnTheCpuIsTheDefault) {
  auto plan = PlanDevices("cpu", "", "fp32");
  ASSERT_TRUE(plan.has_value()) << plan.error();
  EXPECT_EQ(plan->precision, Precision::kFp32);
  EXPECT_EQ(plan->Describe(), "cpu, fp32");
}

TEST(PlanDevices, Bf16OnTheCpuIsAcceptedWhereSupportedElseRefusedNamingWhy) {
  auto plan = PlanDevices("cpu", "", "bf16");
  if (auto supported = Bf16ProductsSupported(); !supported) {
    ASSERT_FALSE(plan.has_value());
    EXPECT_EQ(plan.error(), "--precision bf16 with --device cpu: " + supported.error());
    return;
  }
  ASSERT_TRUE(plan.has_value()) << plan.error();
  EXPECT_EQ(plan->precision, Precision::kBf16);
  EXPECT_EQ(plan->Describe(), "cpu, bf16 products by oneDNN on avx512_bf16");
}

TEST(PlanDevices, TheCpuMakerCarriesThePrecisionToTheShard) {
  auto weights = ModelWeights::Open(ACTEX_FIXTURES_DIR "/qwen2-tiny");
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto slice = PlanShard((*weights)->config(), 0, 1);
  ASSERT_TRUE(slice.has_value()) << slice.error();
  for (const std::string precision : {"fp32", "bf16"}) {
    auto plan = PlanDevices("cpu", "", precision);
    if (!plan) continue;  // bf16 where unsupported: the refusal is tested above
    auto shard =
        DecoderShard::Create(*weights, *slice, {{SiteKind::kResidPost, 0}}, plan->MakerFor(0, 2));
    ASSERT_TRUE(shard.has_value()) << shard.error();
    EXPECT_NE((*shard)->device_description().find(precision == "bf16" ? "bf16 products" : "fp32"),
              std::string::npos)
        << (*shard)->device_description();
  }
}

}  // namespace
}  // namespace actex
