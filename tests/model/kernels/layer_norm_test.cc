#include "model/kernels/layer_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace actex {
namespace {

// Widths 1..40 meet every tail of the four- and eight-lane loops; 768 is GPT-2's.
TEST(LayerNorm, MatchesDoublePrecisionForEveryWidthAndInPlace) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> uniform(-3.0f, 5.0f);
  std::vector<int64_t> widths;
  for (int64_t width = 1; width <= 40; ++width) widths.push_back(width);
  widths.push_back(768);
  for (int64_t width : widths) {
    const int64_t tokens = 3;
    std::vector<float> x(tokens * width), weight(width), bias(width), y(tokens * width);
    for (float& value : x) value = uniform(rng);
    for (float& value : weight) value = uniform(rng);
    for (float& value : bias) value = uniform(rng);
    const float eps = 1e-5f;
    LayerNorm(x.data(), tokens, width, weight.data(), bias.data(), eps, y.data());
    std::vector<float> in_place = x;
    LayerNorm(in_place.data(), tokens, width, weight.data(), bias.data(), eps, in_place.data());
    for (int64_t t = 0; t < tokens; ++t) {
      double mean = 0, variance = 0;
      for (int64_t i = 0; i < width; ++i) mean += x[t * width + i];
      mean /= width;
      for (int64_t i = 0; i < width; ++i) {
        variance += (x[t * width + i] - mean) * (x[t * width + i] - mean);
      }
      variance /= width;
      for (int64_t i = 0; i < width; ++i) {
        const double expected =
            (x[t * width + i] - mean) / std::sqrt(variance + eps) * weight[i] + bias[i];
        EXPECT_NEAR(y[t * width + i], expected, 2e-6 * (std::abs(expected) + 1))
            << "width " << width << " token " << t << " feature " << i;
      }
    }
    EXPECT_EQ(in_place, y) << "width " << width;
  }
}

}  // namespace
}  // namespace actex
