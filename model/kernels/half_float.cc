#include "model/kernels/half_float.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "model/kernels/cpu_isa.h"

namespace actex {

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
    destination[i] = dtype == WeightDtype::kBF16 ? Bfloat16BitsToFloat(bits) : Float16ToFloat(bits);
  }
}

void RoundToBFloat16(const void* source, WeightDtype dtype, int64_t count, uint16_t* destination) {
  const auto* bytes = static_cast<const uint8_t*>(source);
  if (dtype == WeightDtype::kBF16) {
    std::memcpy(destination, bytes, static_cast<size_t>(count) * sizeof(uint16_t));
    return;
  }
  if (dtype == WeightDtype::kF32 && reinterpret_cast<uintptr_t>(source) % alignof(float) == 0) {
    ConvertToBfloat16({static_cast<const float*>(source), static_cast<size_t>(count)}, destination);
    return;
  }
  // F16 (widened exactly) and misaligned F32 (a weight a safetensors file places so)
  // through a float block on the stack, then rounded.
  constexpr int64_t kBlock = 256;
  float block[kBlock];
  for (int64_t first = 0; first < count; first += kBlock) {
    const int64_t n = std::min(kBlock, count - first);
    WidenToFloat(bytes + WeightDtypeBytes(dtype) * first, dtype, n, block);
    RoundToBFloat16(block, WeightDtype::kF32, n, destination + first);
  }
}

int WeightDtypeBytes(WeightDtype dtype) { return dtype == WeightDtype::kF32 ? 4 : 2; }

}  // namespace actex
