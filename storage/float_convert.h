#ifndef ACTEX_STORAGE_FLOAT_CONVERT_H_
#define ACTEX_STORAGE_FLOAT_CONVERT_H_

#include <cstdint>
#include <span>

namespace actex {

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
