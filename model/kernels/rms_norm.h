#ifndef ACTEX_MODEL_KERNELS_RMS_NORM_H_
#define ACTEX_MODEL_KERNELS_RMS_NORM_H_

#include <cstdint>

namespace actex {

// HF's Qwen2RMSNorm in float32, row by row:
//   y = weight * (x * 1/sqrt(mean(x²) + eps))
// with the product x * rsqrt rounded before the weight multiplies it, as HF does.
// `x` and `y` are [tokens, width] contiguous and may be the same buffer.
void RmsNorm(const float* x, int64_t tokens, int64_t width, const float* weight, float eps,
             float* y);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_RMS_NORM_H_
