#ifndef ACTEX_MODEL_KERNELS_GELU_H_
#define ACTEX_MODEL_KERNELS_GELU_H_

#include <cstdint>

namespace actex {

// The tanh approximation of GELU in float32 (torch's gelu(approximate="tanh"), GPT-2's
// gelu_new, Gemma's gelu_pytorch_tanh):
//   gelu(x) = 0.5 · x · (1 + tanh(sqrt(2/π) · (x + 0.044715 · x³)))
// GeluTanh: out = gelu(x). GeGlu (Gemma's MLP): out = gelu(gate) · up. `out` may
// alias an input.
void GeluTanh(const float* x, int64_t count, float* out);
void GeGlu(const float* gate, const float* up, int64_t count, float* out);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_GELU_H_
