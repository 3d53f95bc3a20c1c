#ifndef ACTEX_STORAGE_FLOAT_CONVERT_H_
#define ACTEX_STORAGE_FLOAT_CONVERT_H_

#include <bit>
#include <cstdint>
#include <span>

#include "base/bfloat16.h"  // FloatToBfloat16Bits, Bfloat16BitsToFloat, ConvertToBfloat16

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

// The exact float value of binary16 bits (every one is representable).
float HalfBitsToFloat(uint16_t bits);

// Converts `values` into `out` (2 bytes each, little-endian).
void ConvertToHalf(std::span<const float> values, uint16_t* out);

}  // namespace actex

#endif  // ACTEX_STORAGE_FLOAT_CONVERT_H_
