#include "model/kernels/swiglu.h"

#include <immintrin.h>

#include <algorithm>

#include "model/kernels/cpu_isa.h"
#include "model/kernels/vector_exp.h"

namespace actex {
namespace {

// silu(g) * u for eight lanes: g / (1 + e^-g) * u, as PyTorch's SiLU computes it.
__m256 SwiGlu8(__m256 gate, __m256 up) {
  const __m256 denominator =
      _mm256_add_ps(_mm256_set1_ps(1.0f), Exp8(_mm256_sub_ps(_mm256_setzero_ps(), gate)));
  return _mm256_mul_ps(_mm256_div_ps(gate, denominator), up);
}

// The same sixteen lanes at a time: lane for lane the operations of SwiGlu8, so both
// paths give the same bits.
ACTEX_TARGET_AVX512 void SwiGluAvx512(const float* gate, const float* up, int64_t count,
                                      float* out) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 lanes =
        count - i >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (count - i)) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(lanes, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(lanes, up + i);
    const __m512 denominator =
        _mm512_add_ps(_mm512_set1_ps(1.0f), Exp16(_mm512_sub_ps(_mm512_setzero_ps(), g)));
    _mm512_mask_storeu_ps(out + i, lanes, _mm512_mul_ps(_mm512_div_ps(g, denominator), u));
  }
}

void SwiGluAvx2(const float* gate, const float* up, int64_t count, float* out) {
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

}  // namespace

void SwiGlu(const float* gate, const float* up, int64_t count, float* out) {
  if (ActiveIsa() == VectorIsa::kAvx512) {
    SwiGluAvx512(gate, up, count, out);
  } else {
    SwiGluAvx2(gate, up, count, out);
  }
}

}  // namespace actex
