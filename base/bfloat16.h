#ifndef ACTEX_BASE_BFLOAT16_H_
#define ACTEX_BASE_BFLOAT16_H_

// bfloat16 (the upper half of a float32) as torch rounds to it: the one rule the
// model's bf16 products (their rounded inputs) and the writer's stored values share.

#include <cstdint>
#include <span>

namespace actex {

// bfloat16 bits of `value`: rounded to nearest, ties to even (torch's
// .to(torch.bfloat16)); past the largest finite bfloat16 it becomes infinity,
// subnormals round like any value, NaN stays NaN (quiet: bit 6 set, sign and top
// payload kept).
uint16_t FloatToBfloat16Bits(float value);

// The exact float value of bfloat16 bits.
float Bfloat16BitsToFloat(uint16_t bits);

// out[i] = FloatToBfloat16Bits(values[i]) for every value, bit for bit, vectorized:
// VCVTNE2PS2BF16 where the CPU has AVX512_BF16 (it flushes subnormal inputs to zero,
// so a group of 32 holding one is rounded by the integer path instead), else integer
// AVX-512 or AVX2. `out` holds values.size() elements; any alignment.
void ConvertToBfloat16(std::span<const float> values, uint16_t* out);

}  // namespace actex

#endif  // ACTEX_BASE_BFLOAT16_H_
