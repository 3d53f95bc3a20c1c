#include "model/kernels/half_float.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "model/kernels/cpu_isa.h"

namespace actex {

float BFloat16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

float Float16ToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float (10 bits times a power of two).
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  // Rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

uint16_t FloatToFloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (magnitude < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal with step 2^-24. Scaling by
    // 2^24 is exact, and nearbyint rounds ties to even in the default rounding mode.
    const float steps = std::nearbyint(std::bit_cast<float>(magnitude) * 16777216.0f);
    return sign | static_cast<uint16_t>(steps);  // 1024 correctly becomes 2^-14
  }
  // Drop 13 mantissa bits with round-to-nearest-even; a carry moves into the exponent.
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

namespace {

// Widens whole groups of sixteen 16-bit values with AVX-512 and returns how many it
// widened (the caller does the rest); exact, as the AVX2 loops below.
ACTEX_TARGET_AVX512 int64_t WidenSixteensAvx512(const uint8_t* bytes, WeightDtype dtype,
                                                int64_t count, float* destination) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256i halves = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + 2 * i));
    const __m512 widened =
        dtype == WeightDtype::kBF16
            ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(halves), 16))
            : _mm512_cvtph_ps(halves);
    _mm512_storeu_ps(destination + i, widened);
  }
  return i;
}

// Rounds whole groups of sixteen float32 values (`bytes`, any alignment) to bfloat16
// with AVX-512 and returns how many it rounded (the caller does the rest): lane for lane
// FloatToBFloat16's arithmetic, so the same bits (unlike VCVTNEPS2BF16, which flushes
// subnormals to zero).
ACTEX_TARGET_AVX512 int64_t RoundSixteensAvx512(const uint8_t* bytes, int64_t count,
                                                uint16_t* destination) {
  const __m512i one = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7fff);
  const __m512i magnitude_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i infinity = _mm512_set1_epi32(0x7f800000), quiet = _mm512_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512i bits = _mm512_loadu_si512(bytes + 4 * i);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), one);
    const __m512i rounded =
        _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(half, lsb)), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, magnitude_mask), infinity);
    const __m512i result = _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(bits, 16), quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(destination + i), _mm512_cvtepi32_epi16(result));
  }
  return i;
}

}  // namespace

void WidenToFloat(const void* source, WeightDtype dtype, int64_t count, float* destination) {
  const auto* bytes = static_cast<const uint8_t*>(source);
  if (dtype == WeightDtype::kF32) {
    std::memcpy(destination, bytes, static_cast<size_t>(count) * sizeof(float));
    return;
  }
  int64_t i = 0;
  if (ActiveIsa() == VectorIsa::kAvx512) i = WidenSixteensAvx512(bytes, dtype, count, destination);
  if (dtype == WeightDtype::kBF16) {
    for (; i + 8 <= count; i += 8) {  // bits << 16, eight at a time
      const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 2 * i));
      const __m256i widened = _mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16);
      _mm256_storeu_ps(destination + i, _mm256_castsi256_ps(widened));
    }
  } else {
    for (; i + 8 <= count; i += 8) {  // F16C's conversion is exact, subnormals included
      const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 2 * i));
      _mm256_storeu_ps(destination + i, _mm256_cvtph_ps(halves));
    }
  }
  for (; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * i, 2);
    destination[i] = dtype == WeightDtype::kBF16 ? BFloat16ToFloat(bits) : Float16ToFloat(bits);
  }
}

void RoundToBFloat16(const void* source, WeightDtype dtype, int64_t count, uint16_t* destination) {
  const auto* bytes = static_cast<const uint8_t*>(source);
  if (dtype == WeightDtype::kBF16) {
    std::memcpy(destination, bytes, static_cast<size_t>(count) * sizeof(uint16_t));
    return;
  }
  if (dtype == WeightDtype::kF32) {
    int64_t i = 0;
    if (ActiveIsa() == VectorIsa::kAvx512) i = RoundSixteensAvx512(bytes, count, destination);
    for (; i < count; ++i) {
      float value;
      std::memcpy(&value, bytes + 4 * i, 4);
      destination[i] = FloatToBFloat16(value);
    }
    return;
  }
  // F16: widened exactly through a float block on the stack, then rounded.
  constexpr int64_t kBlock = 256;
  float block[kBlock];
  for (int64_t first = 0; first < count; first += kBlock) {
    const int64_t n = std::min(kBlock, count - first);
    WidenToFloat(bytes + 2 * first, dtype, n, block);
    RoundToBFloat16(block, WeightDtype::kF32, n, destination + first);
  }
}

int WeightDtypeBytes(WeightDtype dtype) { return dtype == WeightDtype::kF32 ? 4 : 2; }

}  // namespace actex
