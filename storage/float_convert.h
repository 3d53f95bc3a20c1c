#ifndef ACTEX_STORAGE_FLOAT_CONVERT_H_
#define ACTEX_STORAGE_FLOAT_CONVERT_H_

#include <bit>
#include <cstdint>
#include <span>

namespace actex {

// The smallest magnitudes that round to infinity: in binary16 65520 (the midpoint
// above the largest finite 65504, whose last mantissa bit is odd, so ties go up), in
// bfloat16 the midpoint above its largest finite value the same way.
inline constexpr float kHalfOverflowMagnitude = 65520.0f;
inline constexpr float kBfloat16OverflowMagnitude = std::bit_cast<float>(uint32_t{0x7F7F8000});

// IEEE binary16 bits of `value`, rounded to nearest, ties to even: values from
// 65520 up become infinity, values below 2^-14 become subnormals (or zero below
// 2^-25), NaN stays NaN (quiet, sign and top payload bits kept).
uint16_t FloatToHalfBits(float value);

// bfloat16 bits of `value` (its top 16 bits), rounded to nearest, ties to even;
// overflow past the largest bfloat16 becomes infinity, NaN stays NaN (quiet).
uint16_t FloatToBfloat16Bits(float value);

// The exact float value of binary16 / bfloat16 bits (every one is representable).
float HalfBitsToFloat(uint16_t bits);
float Bfloat16BitsToFloat(uint16_t bits);

// Converts `values` into `out` (2 bytes each, little-endian).
void ConvertToHalf(std::span<const float> values, uint16_t* out);
void ConvertToBfloat16(std::span<const float> values, uint16_t* out);

}  // namespace actex

#endif  // ACTEX_STORAGE_FLOAT_CONVERT_H_
