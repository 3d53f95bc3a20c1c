#ifndef ACTEX_TESTS_CUDA_EMULATOR_CUDA_FP16_H_
#define ACTEX_TESTS_CUDA_EMULATOR_CUDA_FP16_H_

// The CUDA emulator's IEEE half: the bits as CUDA stores them, widened by the model's
// own conversion (model/kernels/half_float.h).

#include <cstdint>

#include "model/kernels/half_float.h"

struct __half {
  uint16_t bits;
};

inline float __half2float(__half value) { return actex::Float16ToFloat(value.bits); }

#endif  // ACTEX_TESTS_CUDA_EMULATOR_CUDA_FP16_H_
