#include "model/kernels/swiglu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/model/kernels/reference_activations.h"

namespace actex {
namespace {

// silu(g) * u in double.
double ReferenceSwiGlu(float gate, float up) { return test_support::ReferenceSilu(gate) * up; }

// Every length from 0 to 70 covers whole vectors and every tail of both ISAs' widths.
TEST(SwiGlu, MatchesDoublePrecisionForEveryTailLength) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-12.0f, 12.0f);
  for (int64_t count = 0; count <= 70; ++count) {
    std::vector<float> gate(count), up(count), out(count + 1, 7.0f);
    for (float& value : gate) value = uniform(rng);
    for (float& value : up) value = uniform(rng);
    SwiGlu(gate.data(), up.data(), count, out.data());
    for (int64_t i = 0; i < count; ++i) {
      const double expected = ReferenceSwiGlu(gate[i], up[i]);
      EXPECT_NEAR(out[i], expected, 4e-7 * std::abs(expected) + 1e-30) << count << " " << i;
    }
    EXPECT_EQ(out[count], 7.0f) << "wrote past the end at length " << count;
  }
}

TEST(SwiGlu, WritesInPlaceOverTheGate) {
  std::vector<float> gate = {-3.0f, -0.5f, 0.0f, 0.25f, 1.0f, 2.0f, 30.0f, -90.0f, 5.0f};
  const std::vector<float> original = gate;
  std::vector<float> up(gate.size(), 2.0f);
  SwiGlu(gate.data(), up.data(), static_cast<int64_t>(gate.size()), gate.data());
  for (size_t i = 0; i < gate.size(); ++i) {
    const double expected = ReferenceSwiGlu(original[i], 2.0f);
    EXPECT_NEAR(gate[i], expected, 4e-7 * std::abs(expected) + 1e-30) << i;
  }
}

}  // namespace
}  // namespace actex
