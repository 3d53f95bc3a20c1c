#ifndef ACTEX_MODEL_KERNELS_LAYER_NORM_H_
#define ACTEX_MODEL_KERNELS_LAYER_NORM_H_

#include <cstdint>

namespace actex {

// torch.nn.LayerNorm in float32, row by row (GPT-2's ln_1, ln_2, ln_f):
//   y = (x - mean) / sqrt(var + eps) * weight + bias,  var the biased variance
// with mean and variance accumulated in double. `x` and `y` are [tokens, width]
// contiguous and may be the same buffer.
void LayerNorm(const float* x, int64_t tokens, int64_t width, const float* weight,
               const float* bias, float eps, float* y);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_LAYER_NORM_H_
