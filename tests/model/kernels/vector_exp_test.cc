#include "model/kernels/vector_exp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace
}  // namespace actex
