#include "storage/float_convert.h"

#include <bit>

namespace actex {

namespace {

constexpr uint32_t kFloatAbsMask = 0x7FFFFFFF;
constexpr uint32_t kFloatInfinity = 0x7F800000;

// Rounds `value` >> `shift` to nearest, ties to even.
uint32_t ShiftRightRoundingToEven(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((uint32_t{1} << shift) - 1);
  const uint32_t half = uint32_t{1} << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

}  // namespace

uint16_t FloatToHalfBits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & kFloatAbsMask;
  if (magnitude >= kFloatInfinity) {
    if (magnitude == kFloatInfinity) return sign | 0x7C00;
    // NaN: keep the top 10 payload bits and force the quiet bit so a payload that
    // lived only in the dropped low bits cannot turn into infinity.
    return static_cast<uint16_t>(sign | 0x7C00 | 0x0200 | ((magnitude >> 13) & 0x03FF));
  }
  // 65520 is halfway between 65504 (the largest half, odd mantissa) and 65536:
  // it and everything above round to infinity.
  if (magnitude >= 0x477FF000) return sign | 0x7C00;
  if (magnitude >= 0x38800000) {
    // Normal half: rebias the exponent (127 -> 15) and round 23 mantissa bits to
    // 10; a carry out of the mantissa correctly bumps the exponent.
    const uint32_t rebased = magnitude - ((127 - 15) << 23);
    return static_cast<uint16_t>(sign | ShiftRightRoundingToEven(rebased, 13));
  }
  // Subnormal half: the value in units of 2^-24, rounded. The float's exponent e
  // (biased) gives value = mantissa_with_implicit_bit * 2^(e - 150), so the shift
  // is 126 - e; below 2^-25 (e < 102) everything rounds to zero.
  const int exponent = static_cast<int>(magnitude >> 23);
  if (exponent < 102) return sign;
  const uint32_t mantissa = (magnitude & 0x007FFFFF) | 0x00800000;
  return static_cast<uint16_t>(sign | ShiftRightRoundingToEven(mantissa, 126 - exponent));
}

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1F;
  const uint32_t mantissa = bits & 0x03FF;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | kFloatInfinity | (mantissa << 13));
  if (exponent != 0) {
    return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
  }
  // Zero or subnormal: mantissa x 2^-24 is exact in float.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign != 0 ? -magnitude : magnitude;
}

void ConvertToHalf(std::span<const float> values, uint16_t* out) {
  for (size_t i = 0; i < values.size(); ++i) out[i] = FloatToHalfBits(values[i]);
}

}  // namespace actex
