#ifndef ACTEX_TESTS_CUDA_EMULATOR_CUDA_BF16_H_
#define ACTEX_TESTS_CUDA_EMULATOR_CUDA_BF16_H_

// The CUDA emulator's bfloat16: the bits as CUDA stores them, converted by the model's
// own conversions (model/kernels/half_float.h: round to nearest even, as CUDA's _rn).

#include <cstdint>

#include "model/kernels/half_float.h"

struct __nv_bfloat16 {
  uint16_t bits;
};

inline __nv_bfloat16 __float2bfloat16_rn(float value) {
  return {actex::FloatToBfloat16Bits(value)};
}
inline float __bfloat162float(__nv_bfloat16 value) {
  return actex::Bfloat16BitsToFloat(value.bits);
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 value) { return value.bits; }

#endif  // ACTEX_TESTS_CUDA_EMULATOR_CUDA_BF16_H_
