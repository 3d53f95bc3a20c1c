#include "model/kernels/swiglu.h"

#include <immintrin.h>

#include <algorithm>

#include "model/kernels/vector_exp.h"

namespace actex {
namespace {

// silu(g) * u for eight lanes: g / (1 + e^-g) * u, as PyTorch's SiLU computes it.
__m256 SwiGlu8(__m256 gate, __m256 up) {
  const __m256 denominator =
      _mm256_add_ps(_mm256_set1_ps(1.0f), Exp8(_mm256_sub_ps(_mm256_setzero_ps(), gate)));
  return _mm256_mul_ps(_mm256_div_ps(gate, denominator), up);
}

}  // namespace

void SwiGlu(const float* gate, const float* up, int64_t count, float* out) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(out + i, SwiGlu8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i < count) {
    // The tail goes through the same lanes, so every element is computed alike.
    alignas(32) float gate_tail[8] = {}, up_tail[8] = {}, out_tail[8];
    std::copy(gate + i, gate + count, gate_tail);
    std::copy(up + i, up + count, up_tail);
    _mm256_store_ps(out_tail, SwiGlu8(_mm256_load_ps(gate_tail), _mm256_load_ps(up_tail)));
    std::copy(out_tail, out_tail + (count - i), out + i);
  }
}

}  // namespace actex
