#include "model/kernels/rms_norm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/kernels/swiglu.h"

namespace actex {
namespace {

TEST(RmsNorm, ScalesEachRowByItsRootMeanSquareThenTheWeight) {
  const std::vector<float> x = {3, 4, 0, 0, -1, -1, -1, -1};
  const std::vector<float> weight = {1, 2, 0.5f, 1};
  std::vector<float> y(8);
  RmsNorm(x.data(), 2, 4, weight.data(), 0.0f, y.data());
  const float rms0 = std::sqrt(25.0f / 4.0f);
  EXPECT_FLOAT_EQ(y[0], 3 / rms0);
  EXPECT_FLOAT_EQ(y[1], 2 * 4 / rms0);
  EXPECT_EQ(y[2], 0.0f);
  for (int i = 4; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], -weight[i - 4]);
  // eps keeps an all-zero row finite.
  std::vector<float> zeros(4, 0.0f), out(4);
  RmsNorm(zeros.data(), 1, 4, weight.data(), 1e-6f, out.data());
  for (float value : out) EXPECT_EQ(value, 0.0f);
}

TEST(SwiGlu, IsSiluOfGateTimesUp) {
  const std::vector<float> gate = {-2.0f, 0.0f, 1.5f, 30.0f};
  const std::vector<float> up = {1.0f, 5.0f, -2.0f, 0.5f};
  std::vector<float> out(4);
  SwiGlu(gate.data(), up.data(), 4, out.data());
  for (int i = 0; i < 4; ++i) {
    const double silu = gate[i] / (1.0 + std::exp(-double{gate[i]}));
    EXPECT_NEAR(out[i], silu * up[i], 1e-6 * std::fabs(silu * up[i]) + 1e-7);
  }
}

}  // namespace
}  // namespace actex
