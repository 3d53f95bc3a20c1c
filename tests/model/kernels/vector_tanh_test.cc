#include "model/kernels/vector_tanh.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace actex {
namespace {

float FirstLane(__m256 v) { return _mm256_cvtss_f32(v); }

// Distance from the correctly rounded float of `exact`, in that float's ulps.
float Ulps(float ours, double exact) {
  const float rounded = static_cast<float>(exact);
  if (rounded == 0.0f) return ours == 0.0f ? 0.0f : INFINITY;
  const float ulp = std::nextafter(std::fabs(rounded), INFINITY) - std::fabs(rounded);
  return static_cast<float>(std::fabs(ours - exact) / ulp);
}

TEST(Tanh8, IsWithinThreeUlpEverywhere) {
  float worst = 0.0f, worst_at = 0.0f;
  auto check = [&](float x) {
    const float ulps = Ulps(FirstLane(Tanh8(_mm256_set1_ps(x))), std::tanh(static_cast<double>(x)));
    if (ulps > worst) worst = ulps, worst_at = x;
  };
  for (float x = -12.0f; x <= 12.0f; x += 0.000731f) check(x);
  for (float x = 1e-30f; x < 1.0f; x *= 1.37f) check(x), check(-x);
  std::printf("Tanh8: worst %.2f ulp, at %g\n", worst, worst_at);
  EXPECT_LE(worst, 3.0f) << "at " << worst_at;
}

TEST(Tanh8, HandlesTheEdges) {
  EXPECT_EQ(FirstLane(Tanh8(_mm256_set1_ps(0.0f))), 0.0f);
  EXPECT_TRUE(std::signbit(FirstLane(Tanh8(_mm256_set1_ps(-0.0f)))));
  EXPECT_EQ(FirstLane(Tanh8(_mm256_set1_ps(INFINITY))), 1.0f);
  EXPECT_EQ(FirstLane(Tanh8(_mm256_set1_ps(-INFINITY))), -1.0f);
  EXPECT_EQ(FirstLane(Tanh8(_mm256_set1_ps(100.0f))), 1.0f);
  EXPECT_EQ(FirstLane(Tanh8(_mm256_set1_ps(-100.0f))), -1.0f);
  EXPECT_TRUE(std::isnan(FirstLane(Tanh8(_mm256_set1_ps(std::numeric_limits<float>::quiet_NaN())))));
}

ACTEX_TARGET_AVX512 void CompareTanh16WithTanh8(const std::vector<float>& inputs, int* mismatches) {
  for (size_t i = 0; i + 16 <= inputs.size(); i += 16) {
    alignas(64) float wide[16], narrow[16];
    _mm512_store_ps(wide, Tanh16(_mm512_loadu_ps(inputs.data() + i)));
    _mm256_store_ps(narrow, Tanh8(_mm256_loadu_ps(inputs.data() + i)));
    _mm256_store_ps(narrow + 8, Tanh8(_mm256_loadu_ps(inputs.data() + i + 8)));
    for (int lane = 0; lane < 16; ++lane) {
      if (std::memcmp(&wide[lane], &narrow[lane], sizeof(float)) != 0) ++*mismatches;
    }
  }
}

TEST(Tanh16, AgreesWithTanh8BitForBit) {
  if (DetectedIsa() != VectorIsa::kAvx512) GTEST_SKIP() << "this CPU has no AVX-512";
  std::vector<float> inputs;
  for (float x = -50.0f; x <= 50.0f; x += 0.00377f) inputs.push_back(x);
  for (float edge : {-INFINITY, INFINITY, std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f,
                     0.625f, -0.625f, std::nextafter(0.625f, 1.0f)}) {
    inputs.push_back(edge);
  }
  while (inputs.size() % 16 != 0) inputs.push_back(0.25f);
  int mismatches = 0;
  CompareTanh16WithTanh8(inputs, &mismatches);
  EXPECT_EQ(mismatches, 0) << "of " << inputs.size() << " inputs";
}

}  // namespace
}  // namespace actex
