#ifndef ACTEX_TESTS_MODEL_KERNELS_TEST_WEIGHT_H_
#define ACTEX_TESTS_MODEL_KERNELS_TEST_WEIGHT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "model/kernels/linear.h"
#include "model/kernels/thread_team.h"
#include "model/model_weights.h"

namespace actex::test_support {

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

// A product of X [tokens, ldx] into every target (Linear or Bf16Linear of targets).
using MultiplyTargets =
    std::function<void(const float* x, int64_t ldx, int64_t tokens,
                       std::span<const LinearTarget> targets, ThreadTeam* team)>;
// Expects `multiply` of several targets of one X in one call (as q, k and v: F32 with a
// bias, BF16 read in place, misaligned F16 tiles, and one of no output features) on a
// team of three to give each target's Y to the bit of one call per target, its padding
// untouched.
void ExpectTargetsMatchOneCallEach(const MultiplyTargets& multiply);

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_MODEL_KERNELS_TEST_WEIGHT_H_
