#ifndef ACTEX_MODEL_KERNELS_HALF_FLOAT_H_
#define ACTEX_MODEL_KERNELS_HALF_FLOAT_H_

#include <cstdint>

#include "base/bfloat16.h"  // FloatToBfloat16Bits, Bfloat16BitsToFloat
#include "model/model_weights.h"

namespace actex {

// Exact, including subnormals, infinities and NaN (every half is a float).
float Float16ToFloat(uint16_t bits);
// Round to nearest, ties to even; overflow gives infinity, tiny values become
// half subnormals or zero.
uint16_t FloatToFloat16(float value);

// Widens `count` consecutive elements of `dtype` starting at `source` (any
// alignment) to float32 in `destination`.
void WidenToFloat(const void* source, WeightDtype dtype, int64_t count, float* destination);

// Rounds `count` consecutive elements of `dtype` starting at `source` (any alignment)
// to bfloat16 in `destination`, as torch's .to(torch.bfloat16): BF16 is copied, F32
// rounded to nearest even (ConvertToBfloat16), F16 widened exactly and then rounded.
void RoundToBFloat16(const void* source, WeightDtype dtype, int64_t count, uint16_t* destination);

// Bytes per element of `dtype`.
int WeightDtypeBytes(WeightDtype dtype);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_HALF_FLOAT_H_
