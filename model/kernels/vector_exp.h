#ifndef ACTEX_MODEL_KERNELS_VECTOR_EXP_H_
#define ACTEX_MODEL_KERNELS_VECTOR_EXP_H_

#include <immintrin.h>

#include "model/kernels/cpu_isa.h"

namespace actex {

// e^x for eight floats with AVX2/FMA, within 2 ulp of the correctly rounded result
// for results in the normal range (the same class of accuracy as the SLEEF u10 exp
// that PyTorch's vectorised CPU kernels use). Results below float's normal range
// (x < -87.33) are 0 instead of subnormals; x > 88.37 gives +inf; NaN stays NaN.
// Softmax and SiLU call this on every element, where the scalar libm expf would cost
// as much as a sixth of the forward pass.
__m256 Exp8(__m256 x);

// The same for sixteen floats with AVX-512: lane for lane the same operations as Exp8,
// so the two agree bit for bit. Call only where ActiveIsa() is kAvx512.
ACTEX_TARGET_AVX512 __m512 Exp16(__m512 x);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_VECTOR_EXP_H_
