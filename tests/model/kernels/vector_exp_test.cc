#include "model/kernels/vector_exp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace actex {
namespace {

float Lane0(__m256 v) { return _mm256_cvtss_f32(v); }

TEST(Exp8, IsWithinTwoUlpOfLibmOverTheNormalRange) {
  float worst_ulps = 0.0f;
  for (float x = -87.0f; x <= 88.0f; x += 0.0013f) {
    const float ours = Lane0(Exp8(_mm256_set1_ps(x)));
    const double exact = std::exp(static_cast<double>(x));
    const float ulp =
        std::nextafter(static_cast<float>(exact), INFINITY) - static_cast<float>(exact);
    worst_ulps = std::max(worst_ulps, static_cast<float>(std::fabs(ours - exact) / ulp));
  }
  EXPECT_LE(worst_ulps, 2.0f);
  EXPECT_EQ(Lane0(Exp8(_mm256_set1_ps(0.0f))), 1.0f);
}

TEST(Exp8, HandlesTheEdges) {
  EXPECT_EQ(Lane0(Exp8(_mm256_set1_ps(-INFINITY))), 0.0f);
  EXPECT_EQ(Lane0(Exp8(_mm256_set1_ps(-100.0f))), 0.0f);
  EXPECT_EQ(Lane0(Exp8(_mm256_set1_ps(100.0f))), INFINITY);
  EXPECT_EQ(Lane0(Exp8(_mm256_set1_ps(INFINITY))), INFINITY);
  EXPECT_TRUE(std::isnan(Lane0(Exp8(_mm256_set1_ps(std::numeric_limits<float>::quiet_NaN())))));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, Exp8(_mm256_setr_ps(0, 1, -1, 2, -2, 10, -10, 0.5f)));
  const float inputs[8] = {0, 1, -1, 2, -2, 10, -10, 0.5f};
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(lanes[i], std::exp(inputs[i]), 3e-7 * std::exp(inputs[i]));
}

// Exp16 is compiled for AVX-512 and only runs on such a CPU; elsewhere the machine
// cannot execute it, which the skip says.
ACTEX_TARGET_AVX512 void CompareExp16WithExp8(const float* inputs, int count, int* mismatches) {
  for (int i = 0; i + 16 <= count; i += 16) {
    alignas(64) float wide[16], narrow[16];
    _mm512_store_ps(wide, Exp16(_mm512_loadu_ps(inputs + i)));
    _mm256_store_ps(narrow, Exp8(_mm256_loadu_ps(inputs + i)));
    _mm256_store_ps(narrow + 8, Exp8(_mm256_loadu_ps(inputs + i + 8)));
    for (int lane = 0; lane < 16; ++lane) {
      if (std::memcmp(&wide[lane], &narrow[lane], sizeof(float)) != 0) ++*mismatches;
    }
  }
}

TEST(Exp16, AgreesWithExp8BitForBitEverywhere) {
  if (DetectedIsa() != VectorIsa::kAvx512) GTEST_SKIP() << "this CPU has no AVX-512";
  std::vector<float> inputs;
  for (float x = -120.0f; x <= 120.0f; x += 0.00731f) inputs.push_back(x);
  for (float edge : {-INFINITY, INFINITY, std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f,
                     -87.3365447505531f, 88.3762626647949f, 1e-30f, -1e-30f}) {
    inputs.push_back(edge);
  }
  while (inputs.size() % 16 != 0) inputs.push_back(0.5f);
  int mismatches = 0;
  CompareExp16WithExp8(inputs.data(), static_cast<int>(inputs.size()), &mismatches);
  EXPECT_EQ(mismatches, 0) << "of " << inputs.size() << " inputs";
}

}  // namespace
}  // namespace actex
