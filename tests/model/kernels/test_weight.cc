#include "tests/model/kernels/test_weight.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "model/kernels/half_float.h"

namespace actex::test_support {

TestWeight MakeWeight(int64_t rows, int64_t cols, WeightDtype dtype, size_t byte_offset,
                      uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  TestWeight weight;
  const int bytes = WeightDtypeBytes(dtype);
  weight.storage.resize(byte_offset + rows * cols * bytes);
  weight.values.resize(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float value = uniform(rng);
    uint8_t* out = weight.storage.data() + byte_offset + i * bytes;
    if (dtype == WeightDtype::kF32) {
      weight.values[i] = value;
      std::memcpy(out, &value, 4);
    } else {
      const uint16_t half =
          dtype == WeightDtype::kBF16 ? FloatToBfloat16Bits(value) : FloatToFloat16(value);
      weight.values[i] =
          dtype == WeightDtype::kBF16 ? Bfloat16BitsToFloat(half) : Float16ToFloat(half);
      std::memcpy(out, &half, 2);
    }
  }
  weight.view = {weight.storage.data() + byte_offset, dtype, rows, cols};
  return weight;
}

LinearOperands MakeLinearOperands(int64_t tokens, int64_t ldx, int64_t out, int64_t ldy) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  LinearOperands operands{.x = std::vector<float>(tokens * ldx),
                          .bias = std::vector<float>(out),
                          .y = std::vector<float>(tokens * ldy, 123.0f)};
  for (float& value : operands.x) value = uniform(rng);
  for (float& value : operands.bias) value = uniform(rng);
  return operands;
}

void ExpectTargetsMatchOneCallEach(const MultiplyTargets& multiply) {
  constexpr int64_t kTokens = 37, kIn = 1100, kLdx = kIn + 3;
  const TestWeight queries = MakeWeight(300, kIn, WeightDtype::kF32, 0, 11);
  const TestWeight keys = MakeWeight(96, kIn, WeightDtype::kBF16, 0, 12);
  const TestWeight values = MakeWeight(70, kIn, WeightDtype::kF16, 1, 13);
  const WeightSlice slices[] = {RowSlice(queries.view, 10, 290), RowSlice(keys.view, 0, 96),
                                RowSlice(values.view, 5, 70), RowSlice(keys.view, 4, 4)};
  const LinearOperands operands = MakeLinearOperands(kTokens, kLdx, 280, 300);
  std::vector<std::vector<float>> together, alone;
  std::vector<LinearTarget> targets;
  for (const WeightSlice& slice : slices) {
    const int64_t ldy = slice.out_features() + 2;
    together.emplace_back(kTokens * ldy, 123.0f);
    alone.emplace_back(kTokens * ldy, 123.0f);
    const float* bias = targets.empty() ? operands.bias.data() : nullptr;
    targets.push_back({&slice, bias, together.back().data(), ldy});
  }
  ThreadTeam team(3);
  multiply(operands.x.data(), kLdx, kTokens, targets, &team);
  for (size_t i = 0; i < targets.size(); ++i) {
    LinearTarget target = targets[i];
    target.y = alone[i].data();
    multiply(operands.x.data(), kLdx, kTokens, {&target, 1}, &team);
    EXPECT_EQ(together[i], alone[i]) << "target " << i;
    for (int64_t t = 0; t < kTokens; ++t) {
      EXPECT_EQ(together[i][t * target.ldy + target.ldy - 1], 123.0f);  // padding untouched
    }
  }
  EXPECT_NE(together[0], together[1]);  // the targets are different products
}

}  // namespace actex::test_support
