#include "model/kernels/gelu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/model/kernels/reference_activations.h"

namespace actex {
namespace {

using test_support::ReferenceGeluTanh;

// Every length from 0 to 70 meets whole vectors and every tail of both ISAs' widths.
TEST(GeluTanh, MatchesDoublePrecisionForEveryTailLength) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-9.0f, 9.0f);
  for (int64_t count = 0; count <= 70; ++count) {
    std::vector<float> x(count), up(count), out(count + 1, 7.0f), glu(count + 1, 7.0f);
    for (float& value : x) value = uniform(rng);
    for (float& value : up) value = uniform(rng);
    GeluTanh(x.data(), count, out.data());
    GeGlu(x.data(), up.data(), count, glu.data());
    for (int64_t i = 0; i < count; ++i) {
      const double expected = ReferenceGeluTanh(x[i]);
      // Near gelu's zero at x = 0 and in its negative tail the value is a small
      // difference; the bound is relative to |x|, the size of the terms.
      EXPECT_NEAR(out[i], expected, 1e-6 * std::abs(x[i]) + 1e-30) << count << " " << i;
      EXPECT_NEAR(glu[i], expected * up[i], 1e-6 * std::abs(x[i] * up[i]) + 1e-30);
    }
    EXPECT_EQ(out[count], 7.0f) << "wrote past the end at length " << count;
    EXPECT_EQ(glu[count], 7.0f) << "wrote past the end at length " << count;
  }
}

TEST(GeluTanh, WritesInPlace) {
  std::vector<float> x = {-20.0f, -3.0f, -0.5f, 0.0f, 0.5f, 3.0f, 20.0f, 1e-20f, -1e-20f};
  const std::vector<float> original = x;
  GeluTanh(x.data(), static_cast<int64_t>(x.size()), x.data());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(x[i], ReferenceGeluTanh(original[i]), 1e-6 * std::abs(original[i]) + 1e-30) << i;
  }
}

}  // namespace
}  // namespace actex
