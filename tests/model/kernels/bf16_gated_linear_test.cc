#include "model/kernels/bf16_gated_linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/kernels/cpu_isa.h"
#include "model/kernels/gelu.h"
#include "model/kernels/half_float.h"
#include "model/kernels/swiglu.h"
#include "tests/model/kernels/reference_activations.h"
#include "tests/model/kernels/test_weight.h"

namespace actex {
namespace {

using test_support::MakeWeight;
using test_support::TestWeight;

class Bf16GatedLinearTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto supported = Bf16ProductsSupported(); !supported) GTEST_SKIP() << supported.error();
  }
};

// What one call gives: the activation in float32 (when kept) and rounded for the next
// product.
struct GatedResult {
  std::vector<float> kept;        // [tokens, ldk]
  std::vector<uint16_t> rounded;  // [tokens, columns]
};

GatedResult RunGated(const std::vector<float>& x, int64_t ldx, int64_t tokens,
                     const LinearTarget& gate, const LinearTarget& up, GatedActivation activate,
                     bool keep, int team_size) {
  const int64_t columns = gate.weight->out_features(), ldk = columns + 5;
  GatedResult result{.kept = std::vector<float>(tokens * ldk, 123.0f), .rounded = {}};
  ThreadTeam team(team_size);
  Bf16LinearScratch scratch;
  LinearTarget kept_gate = gate;  // the float32 activation lands in gate's y
  kept_gate.y = result.kept.data();
  kept_gate.ldy = ldk;
  Bf16GatedLinear(x.data(), ldx, tokens, kept_gate, up, activate, keep, &scratch, &team);
  const uint16_t* rounded = RoundedInput(&scratch, tokens * columns);
  result.rounded.assign(rounded, rounded + tokens * columns);
  return result;
}

// act(bf16(X) · bf16(gate)ᵀ + bias) · (bf16(X) · bf16(up)ᵀ + bias) in double, against
// Bf16GatedLinear on teams of one and three: the same bits on both, within float32's
// accumulation of the double, and rounded for the next product as RoundToBFloat16 of
// the float32 activation, kept or not.
void CheckGated(const TestWeight& gate_weight, const TestWeight& up_weight, int64_t first_row,
                int64_t columns, int64_t tokens, bool with_bias, bool silu) {
  const int64_t in = gate_weight.view.cols, ldx = in + 3;
  const WeightSlice gate_slice = RowSlice(gate_weight.view, first_row, first_row + columns);
  const WeightSlice up_slice = RowSlice(up_weight.view, first_row, first_row + columns);
  auto [x, bias, unused] = test_support::MakeLinearOperands(tokens, ldx, first_row + columns, 1);
  const float* gate_bias = with_bias ? bias.data() + first_row : nullptr;
  const LinearTarget gate{&gate_slice, gate_bias, nullptr, 0};
  const LinearTarget up{&up_slice, nullptr, nullptr, 0};
  const GatedActivation activate = silu ? SwiGlu : GeGlu;
  const GatedResult one = RunGated(x, ldx, tokens, gate, up, activate, true, 1);
  const GatedResult three = RunGated(x, ldx, tokens, gate, up, activate, true, 3);
  const GatedResult untapped = RunGated(x, ldx, tokens, gate, up, activate, false, 3);
  EXPECT_EQ(one.kept, three.kept);
  EXPECT_EQ(one.rounded, three.rounded);
  EXPECT_EQ(untapped.rounded, three.rounded);
  const int64_t ldk = columns + 5;
  auto rounded_value = [](const float* row, const WeightSlice& slice, int64_t column,
                          const TestWeight& weight, int64_t i) {
    const float w = weight.values[(slice.first_row + column) * weight.view.cols + i];
    return double{Bfloat16BitsToFloat(FloatToBfloat16Bits(row[i]))} *
           Bfloat16BitsToFloat(FloatToBfloat16Bits(w));
  };
  double worst = 0.0;
  for (int64_t t = 0; t < tokens; ++t) {
    const float* row = x.data() + t * ldx;
    for (int64_t c = 0; c < columns; ++c) {
      double g = gate_bias != nullptr ? gate_bias[c] : 0.0, u = 0.0;
      for (int64_t i = 0; i < in; ++i) {
        g += rounded_value(row, gate_slice, c, gate_weight, i);
        u += rounded_value(row, up_slice, c, up_weight, i);
      }
      const double expected =
          (silu ? test_support::ReferenceSilu(g) : test_support::ReferenceGeluTanh(g)) * u;
      const float kept = three.kept[t * ldk + c];
      // Each product's float32 sum is within 1e-5·√in of the double (as Bf16Linear's).
      const double bound =
          1e-5 * std::sqrt(static_cast<double>(in)) * (1.0 + 1.2 * std::fabs(u) + std::fabs(g)) +
          1e-5 * std::fabs(expected);
      worst = std::max(worst, std::fabs(expected - kept) / bound);
      EXPECT_EQ(three.rounded[t * columns + c], FloatToBfloat16Bits(kept)) << t << ", " << c;
    }
    for (int64_t c = columns; c < ldk; ++c) EXPECT_EQ(three.kept[t * ldk + c], 123.0f);
  }
  EXPECT_LE(worst, 1.0);
}

TEST_F(Bf16GatedLinearTest, MatchesDoubleOfRoundedValuesOnAnyTeamForEveryDtype) {
  for (WeightDtype dtype : {WeightDtype::kBF16, WeightDtype::kF16, WeightDtype::kF32}) {
    // 300 features: tiles of 128, 128 and 44; 1100 inputs: F16 and F32 rounded in
    // column tiles of 512, 512 and 76.
    const TestWeight gate = MakeWeight(330, 1100, dtype, 0, 21);
    const TestWeight up = MakeWeight(330, 1100, dtype, 0, 22);
    CheckGated(gate, up, 17, 300, 45, /*with_bias=*/true, /*silu=*/true);
  }
}

TEST_F(Bf16GatedLinearTest, GeGluAndMisalignedOrFewFeatures) {
  const TestWeight gate = MakeWeight(40, 64, WeightDtype::kBF16, 1, 23);  // misaligned
  const TestWeight up = MakeWeight(40, 64, WeightDtype::kBF16, 0, 24);
  CheckGated(gate, up, 3, 37, 5, /*with_bias=*/false, /*silu=*/false);
  CheckGated(gate, up, 0, 1, 1, /*with_bias=*/true, /*silu=*/true);
}

}  // namespace
}  // namespace actex
