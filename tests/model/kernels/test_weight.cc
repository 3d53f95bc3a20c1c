#include "tests/model/kernels/test_weight.h"

#include <cstring>
#include <random>

#include "model/kernels/half_float.h"

namespace actex::testing {

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
          dtype == WeightDtype::kBF16 ? FloatToBFloat16(value) : FloatToFloat16(value);
      weight.values[i] = dtype == WeightDtype::kBF16 ? BFloat16ToFloat(half) : Float16ToFloat(half);
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

}  // namespace actex::testing
