#include "model/kernels/layer_norm.h"

#include <cmath>

namespace actex {

void LayerNorm(const float* x, int64_t tokens, int64_t width, const float* weight,
               const float* bias, float eps, float* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    const float* row = x + t * width;
    float* out = y + t * width;
    double sum = 0.0;
    for (int64_t i = 0; i < width; ++i) sum += row[i];
    const double mean = sum / static_cast<double>(width);
    double squares = 0.0;
    for (int64_t i = 0; i < width; ++i) {
      const double centered = row[i] - mean;
      squares += centered * centered;
    }
    const float inverse_std =
        static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(width) + eps));
    const float mean_f = static_cast<float>(mean);
    for (int64_t i = 0; i < width; ++i) {
      out[i] = (row[i] - mean_f) * inverse_std * weight[i] + bias[i];
    }
  }
}

}  // namespace actex
