#include "base/bfloat16.h"

#include <immintrin.h>

#include <bit>
#include <cstring>

#include "base/vector_isa.h"

namespace actex {
namespace {

constexpr uint32_t kAbsMask = 0x7fffffff;
constexpr uint32_t kInfinity = 0x7f800000;

// FloatToBfloat16Bits without a branch, so that a loop of it becomes vector code:
// adding 0x7fff plus the kept part's lowest bit carries into the kept part exactly
// when the dropped half is above one half, or one half with an odd kept part (ties to
// even). No value reaches 2^32 on the way: the largest, -infinity, is 0xff800000.
uint16_t RoundBits(uint32_t bits) {
  const uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x40;
  return static_cast<uint16_t>((bits & kAbsMask) > kInfinity ? quiet_nan : rounded);
}

// RoundBits on sixteen lanes; returns how many values it rounded (whole sixteens).
ACTEX_TARGET_AVX512 int64_t RoundSixteens(const float* values, int64_t count, uint16_t* out) {
  const __m512i one = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7fff);
  const __m512i abs_mask = _mm512_set1_epi32(kAbsMask), infinity = _mm512_set1_epi32(kInfinity);
  const __m512i quiet = _mm512_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512i bits = _mm512_loadu_si512(values + i);
    const __m512i kept = _mm512_srli_epi32(bits, 16);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(bits, _mm512_add_epi32(half, _mm512_and_si512(kept, one))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, abs_mask), infinity);
    const __m512i result = _mm512_mask_or_epi32(rounded, nan, kept, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(result));
  }
  return i;
}

// VCVTNE2PS2BF16 rounds to nearest even and quiets NaN as RoundBits does, but reads a
// subnormal input as zero: a group of 32 with one goes through RoundSixteens. Returns
// how many values it rounded (whole groups of 32).
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16"))) int64_t RoundThirtyTwos(
    const float* values, int64_t count, uint16_t* out) {
  constexpr int kSubnormal = 0x20;  // VFPCLASSPS's "denormal" category
  int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m512 low = _mm512_loadu_ps(values + i), high = _mm512_loadu_ps(values + i + 16);
    if ((_mm512_fpclass_ps_mask(low, kSubnormal) | _mm512_fpclass_ps_mask(high, kSubnormal)) != 0) {
      RoundSixteens(values + i, 32, out + i);
      continue;
    }
    const __m512bh rounded = _mm512_cvtne2ps_pbh(high, low);
    std::memcpy(out + i, &rounded, sizeof(rounded));
  }
  return i;
}

}  // namespace

uint16_t FloatToBfloat16Bits(float value) { return RoundBits(std::bit_cast<uint32_t>(value)); }

float Bfloat16BitsToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

void ConvertToBfloat16(std::span<const float> values, uint16_t* out) {
  const auto count = static_cast<int64_t>(values.size());
  int64_t i = 0;
  if (ActiveIsa() == VectorIsa::kAvx512) {
    // __builtin_cpu_supports reads what the runtime found at start-up: a load and a test.
    if (__builtin_cpu_supports("avx512bf16")) i = RoundThirtyTwos(values.data(), count, out);
    i += RoundSixteens(values.data() + i, count - i, out + i);
  }
  for (; i < count; ++i) out[i] = RoundBits(std::bit_cast<uint32_t>(values[i]));
}

}  // namespace actex
