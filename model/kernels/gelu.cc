#include "model/kernels/gelu.h"

#include <cmath>
#include <numbers>

namespace actex {
namespace {

float Gelu(float x) {
  constexpr float kBeta = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  constexpr float kKappa = 0.044715f;
  const float inner = kBeta * (x + kKappa * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(inner));
}

}  // namespace

void GeluTanh(const float* x, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = Gelu(x[i]);
}

void GeGlu(const float* gate, const float* up, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = Gelu(gate[i]) * up[i];
}

}  // namespace actex
