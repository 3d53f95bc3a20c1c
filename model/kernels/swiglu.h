#ifndef ACTEX_MODEL_KERNELS_SWIGLU_H_
#define ACTEX_MODEL_KERNELS_SWIGLU_H_

#include <cstdint>

namespace actex {

// The Qwen2 MLP's gated activation, element by element in float32:
//   out = silu(gate) * up,  silu(g) = g / (1 + exp(-g))
// `out` may alias `gate` or `up`.
void SwiGlu(const float* gate, const float* up, int64_t count, float* out);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_SWIGLU_H_
