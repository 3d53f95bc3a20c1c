#include "model/kernels/gelu.h"

#include <immintrin.h>

#include <algorithm>
#include <numbers>

#include "model/kernels/cpu_isa.h"
#include "model/kernels/vector_tanh.h"

namespace actex {
namespace {

constexpr float kBeta = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
constexpr float kKappa = 0.044715f;

// gelu(x) for eight lanes in PyTorch's order of operations (separate multiplies and
// adds, no fused ones): 0.5·x · (1 + tanh(β · (x + κ · x³))).
__m256 Gelu8(__m256 x) {
  const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 inner = _mm256_mul_ps(_mm256_set1_ps(kBeta),
                                     _mm256_add_ps(x, _mm256_mul_ps(_mm256_set1_ps(kKappa), cube)));
  const __m256 half_x = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
  return _mm256_mul_ps(half_x, _mm256_add_ps(_mm256_set1_ps(1.0f), Tanh8(inner)));
}

// The same for sixteen lanes, lane for lane the same operations.
ACTEX_TARGET_AVX512 __m512 Gelu16(__m512 x) {
  const __m512 cube = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  const __m512 inner = _mm512_mul_ps(_mm512_set1_ps(kBeta),
                                     _mm512_add_ps(x, _mm512_mul_ps(_mm512_set1_ps(kKappa), cube)));
  const __m512 half_x = _mm512_mul_ps(_mm512_set1_ps(0.5f), x);
  return _mm512_mul_ps(half_x, _mm512_add_ps(_mm512_set1_ps(1.0f), Tanh16(inner)));
}

// out = gelu(x) (· up, when `up` is given), sixteen lanes at a time, the tail masked.
ACTEX_TARGET_AVX512 void GeluAvx512(const float* x, const float* up, int64_t count, float* out) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 lanes =
        count - i >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (count - i)) - 1);
    __m512 y = Gelu16(_mm512_maskz_loadu_ps(lanes, x + i));
    if (up != nullptr) y = _mm512_mul_ps(y, _mm512_maskz_loadu_ps(lanes, up + i));
    _mm512_mask_storeu_ps(out + i, lanes, y);
  }
}

// The same eight lanes at a time; the tail goes through the same lanes, zero-padded.
void GeluAvx2(const float* x, const float* up, int64_t count, float* out) {
  auto lanes = [&](const float* xs, const float* ups) {
    const __m256 y = Gelu8(_mm256_loadu_ps(xs));
    return ups != nullptr ? _mm256_mul_ps(y, _mm256_loadu_ps(ups)) : y;
  };
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(out + i, lanes(x + i, up != nullptr ? up + i : nullptr));
  }
  if (i < count) {
    float x_tail[8] = {}, up_tail[8] = {}, out_tail[8];
    std::copy(x + i, x + count, x_tail);
    if (up != nullptr) std::copy(up + i, up + count, up_tail);
    _mm256_storeu_ps(out_tail, lanes(x_tail, up != nullptr ? up_tail : nullptr));
    std::copy(out_tail, out_tail + (count - i), out + i);
  }
}

void Gelu(const float* x, const float* up, int64_t count, float* out) {
  if (ActiveIsa() == VectorIsa::kAvx512) {
    GeluAvx512(x, up, count, out);
  } else {
    GeluAvx2(x, up, count, out);
  }
}

}  // namespace

void GeluTanh(const float* x, int64_t count, float* out) { Gelu(x, nullptr, count, out); }

void GeGlu(const float* gate, const float* up, int64_t count, float* out) {
  Gelu(gate, up, count, out);
}

}  // namespace actex
