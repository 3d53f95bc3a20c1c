#ifndef ACTEX_TESTS_MODEL_KERNELS_REFERENCE_ACTIVATIONS_H_
#define ACTEX_TESTS_MODEL_KERNELS_REFERENCE_ACTIVATIONS_H_

// Test support: the activation functions in double precision, as PyTorch defines them,
// against which the kernels' float32 results are checked.

#include <cmath>
#include <numbers>

namespace actex::test_support {

// silu(g) = g * sigmoid(g).
inline double ReferenceSilu(double g) { return g / (1.0 + std::exp(-g)); }

// gelu(approximate="tanh").
inline double ReferenceGeluTanh(double x) {
  const double beta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  return 0.5 * x * (1.0 + std::tanh(beta * (x + 0.044715 * x * x * x)));
}

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_MODEL_KERNELS_REFERENCE_ACTIVATIONS_H_
