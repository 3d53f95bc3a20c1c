#include "model/kernels/bf16_linear.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/kernels/cpu_isa.h"
#include "model/kernels/half_float.h"
#include "tests/model/kernels/test_weight.h"

namespace actex {
namespace {

using test_support::MakeWeight;
using test_support::TestWeight;

class Bf16LinearTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto supported = Bf16ProductsSupported(); !supported) GTEST_SKIP() << supported.error();
  }
};

// Y = bf16(X) · bf16(W[slice])ᵀ + bias in double, against Bf16Linear on a team of three:
// the products are exact in float32, so only the float32 accumulation differs.
void CheckBf16Linear(const TestWeight& weight, const WeightSlice& slice, int64_t tokens,
                     bool with_bias) {
  const int64_t in = slice.in_features(), out = slice.out_features();
  const int64_t ldx = in + 3, ldy = out + 2;  // strided rows on both sides
  auto [x, bias, y] = test_support::MakeLinearOperands(tokens, ldx, out, ldy);
  ThreadTeam team(3);
  Bf16LinearScratch scratch;
  Bf16Linear(x.data(), ldx, tokens, slice, with_bias ? bias.data() : nullptr, y.data(), ldy,
             &scratch, &team);
  double worst = 0.0;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      double expected = with_bias ? bias[o] : 0.0;
      for (int64_t i = 0; i < in; ++i) {
        const float w =
            weight.values[(slice.first_row + o) * weight.view.cols + slice.first_col + i];
        expected += double{Bfloat16BitsToFloat(FloatToBfloat16Bits(x[t * ldx + i]))} *
                    Bfloat16BitsToFloat(FloatToBfloat16Bits(w));
      }
      worst = std::max(worst, std::fabs(expected - y[t * ldy + o]));
    }
    for (int64_t o = out; o < ldy; ++o) EXPECT_EQ(y[t * ldy + o], 123.0f);  // padding untouched
  }
  EXPECT_LE(worst, 1e-5 * std::sqrt(static_cast<double>(in)));
}

TEST_F(Bf16LinearTest, RowSliceMatchesDoubleOfRoundedValuesForEveryDtype) {
  for (WeightDtype dtype : {WeightDtype::kF32, WeightDtype::kBF16, WeightDtype::kF16}) {
    // F32 and F16 are rounded in tiles: two row tiles by three column tiles (512 + 512 +
    // 76); 70 tokens are rounded in three ranges of rows.
    const TestWeight weight = MakeWeight(2150, 1100, dtype, 0, 1);
    CheckBf16Linear(weight, RowSlice(weight.view, 37, 2137), 70, /*with_bias=*/true);
    CheckBf16Linear(weight, RowSlice(weight.view, 0, 300), 5, /*with_bias=*/false);
  }
}

TEST_F(Bf16LinearTest, ColumnSliceMatchesDoubleOfRoundedValuesForEveryDtype) {
  for (WeightDtype dtype : {WeightDtype::kF32, WeightDtype::kBF16, WeightDtype::kF16}) {
    const TestWeight weight = MakeWeight(48, 96, dtype, 0, 2);
    CheckBf16Linear(weight, ColumnSlice(weight.view, 32, 80), 5, /*with_bias=*/false);
    CheckBf16Linear(weight, ColumnSlice(weight.view, 0, 17), 1, /*with_bias=*/true);
  }
}

TEST_F(Bf16LinearTest, MisalignedBf16WeightsAreCopiedNotMisread) {
  const TestWeight weight = MakeWeight(24, 40, WeightDtype::kBF16, 1, 3);
  CheckBf16Linear(weight, RowSlice(weight.view, 4, 20), 5, /*with_bias=*/true);
  CheckBf16Linear(weight, ColumnSlice(weight.view, 8, 40), 5, /*with_bias=*/false);
}

TEST_F(Bf16LinearTest, AProductOverNoInputFeaturesIsTheBias) {
  const TestWeight weight = MakeWeight(8, 4, WeightDtype::kBF16, 0, 4);
  CheckBf16Linear(weight, ColumnSlice(weight.view, 2, 2), 3, /*with_bias=*/true);
}

TEST_F(Bf16LinearTest, ReusesOnePrimitivePerShape) {
  const TestWeight weight = MakeWeight(64, 32, WeightDtype::kBF16, 0, 5);
  std::vector<float> x(4 * 32, 0.5f), y(4 * 64);
  Bf16LinearScratch scratch;
  for (int repeat = 0; repeat < 3; ++repeat) {
    Bf16Linear(x.data(), 32, 4, RowSlice(weight.view, 0, 64), nullptr, y.data(), 64, &scratch);
  }
  ASSERT_EQ(scratch.gemms.size(), 1u);
  EXPECT_EQ(scratch.gemms[0]->primitives(), 1);
  Bf16Linear(x.data(), 32, 3, RowSlice(weight.view, 0, 64), nullptr, y.data(), 64, &scratch);
  EXPECT_EQ(scratch.gemms[0]->primitives(), 2);  // another token count, another shape
}

TEST_F(Bf16LinearTest, SeveralTargetsOfOneInputGiveTheBitsOfOneBf16LinearEach) {
  Bf16LinearScratch scratch;
  test_support::ExpectTargetsMatchOneCallEach(
      [&](const float* x, int64_t ldx, int64_t tokens, std::span<const LinearTarget> targets,
          ThreadTeam* team) { Bf16Linear(x, ldx, tokens, targets, &scratch, team); });
}

}  // namespace
}  // namespace actex
