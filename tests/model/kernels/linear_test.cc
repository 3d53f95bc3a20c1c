#include "model/kernels/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "model/kernels/half_float.h"
#include "tests/model/kernels/test_weight.h"

namespace actex {
namespace {

using test_support::MakeWeight;
using test_support::TestWeight;

// Y = X · W[slice]ᵀ + bias in double, against Linear.
void CheckLinear(const TestWeight& weight, const WeightSlice& slice, bool with_bias) {
  const int64_t tokens = 5, in = slice.in_features(), out = slice.out_features();
  const int64_t ldx = in + 3, ldy = out + 2;  // strided rows on both sides
  auto [x, bias, y] = test_support::MakeLinearOperands(tokens, ldx, out, ldy);
  std::vector<float> scratch;
  Linear(x.data(), ldx, tokens, slice, with_bias ? bias.data() : nullptr, y.data(), ldy, &scratch);
  double worst = 0.0;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      double expected = with_bias ? bias[o] : 0.0;
      for (int64_t i = 0; i < in; ++i) {
        expected += double{x[t * ldx + i]} *
                    weight.values[(slice.first_row + o) * weight.view.cols + slice.first_col + i];
      }
      worst = std::max(worst, std::fabs(expected - y[t * ldy + o]));
    }
    for (int64_t o = out; o < ldy; ++o) EXPECT_EQ(y[t * ldy + o], 123.0f);  // padding untouched
  }
  EXPECT_LT(worst, 1e-5 * std::sqrt(static_cast<double>(in)));
}

TEST(Linear, WidensWholeRowsUpTo1024ColumnsElse512AndFourMebibytesInEvenTiles) {
  EXPECT_EQ(WidenTileShape(4864, 896).cols, 896);
  // 1170 rows fit in 4 MiB: five tiles, evened out to 992 rows (the last 896).
  EXPECT_EQ(WidenTileShape(4864, 896).rows, 992);
  EXPECT_EQ(WidenTileShape(2432, 896).rows, 832);  // not 1170 + 1170 + 92
  EXPECT_EQ(WidenTileShape(1536, 768).rows, 768);  // GPT-2's MLP share: 2 x 768
  EXPECT_LE(WidenTileShape(2432, 896).rows * 896 * 4, (4 << 20) + 32 * 896 * 4);
  EXPECT_EQ(WidenTileShape(100, 896).rows, 100);
  EXPECT_EQ(WidenTileShape(64, 40).cols, 40);
  EXPECT_EQ(WidenTileShape(896, 4864).cols, 512);
  EXPECT_EQ(WidenTileShape(896, 4864).rows, 896);
  EXPECT_EQ(WidenTileShape(18944, 3584).rows, 1920);  // 10 tiles
}

TEST(Linear, RowSliceMatchesDoubleForEveryDtype) {
  for (WeightDtype dtype : {WeightDtype::kF32, WeightDtype::kBF16, WeightDtype::kF16}) {
    // 2100 rows x 1100 columns: two row tiles (2048 + 52) by three column tiles
    // (512 + 512 + 76) for 16-bit weights.
    const TestWeight weight = MakeWeight(2150, 1100, dtype, 0, 1);
    CheckLinear(weight, RowSlice(weight.view, 37, 2137), /*with_bias=*/true);
    CheckLinear(weight, RowSlice(weight.view, 0, 300), /*with_bias=*/false);
  }
}

TEST(Linear, ColumnSliceMatchesDoubleForEveryDtype) {
  for (WeightDtype dtype : {WeightDtype::kF32, WeightDtype::kBF16, WeightDtype::kF16}) {
    const TestWeight weight = MakeWeight(48, 96, dtype, 0, 2);
    CheckLinear(weight, ColumnSlice(weight.view, 32, 80), /*with_bias=*/false);
    CheckLinear(weight, ColumnSlice(weight.view, 0, 17), /*with_bias=*/true);
  }
}

TEST(Linear, MisalignedFloatWeightsAreCopiedNotMisread) {
  const TestWeight weight = MakeWeight(24, 40, WeightDtype::kF32, 2, 3);
  CheckLinear(weight, RowSlice(weight.view, 4, 20), /*with_bias=*/true);
  CheckLinear(weight, ColumnSlice(weight.view, 8, 40), /*with_bias=*/false);
}

TEST(Linear, SeveralTargetsOfOneInputGiveTheBitsOfOneLinearEach) {
  std::vector<float> scratch;
  test_support::ExpectTargetsMatchOneCallEach(
      [&](const float* x, int64_t ldx, int64_t tokens, std::span<const LinearTarget> targets,
          ThreadTeam* team) { Linear(x, ldx, tokens, targets, &scratch, team); });
}

}  // namespace
}  // namespace actex
