#ifndef ACTEX_TESTS_MODEL_KERNELS_TEST_WEIGHT_H_
#define ACTEX_TESTS_MODEL_KERNELS_TEST_WEIGHT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model_weights.h"

namespace actex::testing {

// A random [rows, cols] weight stored in `dtype`, and its exact float32 values.
struct TestWeight {
  std::vector<uint8_t> storage;
  std::vector<float> values;
  WeightView view;
};

// Uniform values in [-1, 1) from `seed`, stored `byte_offset` bytes into `storage` (an
// odd offset misaligns the view).
TestWeight MakeWeight(int64_t rows, int64_t cols, WeightDtype dtype, size_t byte_offset,
                      uint32_t seed);

// The other operands of a product test: X [tokens, ldx] and bias [out] uniform in
// [-1, 1) (seed 7), Y [tokens, ldy] filled with 123 (so padding left alone shows).
struct LinearOperands {
  std::vector<float> x, bias, y;
};
LinearOperands MakeLinearOperands(int64_t tokens, int64_t ldx, int64_t out, int64_t ldy);

}  // namespace actex::testing

#endif  // ACTEX_TESTS_MODEL_KERNELS_TEST_WEIGHT_H_
