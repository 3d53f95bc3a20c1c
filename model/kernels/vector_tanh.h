#ifndef ACTEX_MODEL_KERNELS_VECTOR_TANH_H_
#define ACTEX_MODEL_KERNELS_VECTOR_TANH_H_

#include <immintrin.h>

#include "model/kernels/cpu_isa.h"

namespace actex {

// tanh(x) for eight floats with AVX2/FMA, within 3 ulp of the correctly rounded result
// (PyTorch's vectorised CPU tanh, SLEEF's u10, is of the same class): the Cephes
// single-precision odd polynomial for |x| <= 0.625, where 1 - 2/(e^2|x| + 1) would
// cancel, and that form (through Exp8) above it. ±inf give ±1; NaN stays NaN.
// GELU's tanh form and Gemma's logit softcapping call it on every element, where libm's
// scalar tanhf would cost a third of an MLP.
__m256 Tanh8(__m256 x);

// The same for sixteen floats with AVX-512, lane for lane the operations of Tanh8, so
// the two agree bit for bit. Call only where ActiveIsa() is kAvx512.
ACTEX_TARGET_AVX512 __m512 Tanh16(__m512 x);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_VECTOR_TANH_H_
