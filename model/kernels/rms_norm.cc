#include "model/kernels/rms_norm.h"

#include <immintrin.h>

#include <cmath>

namespace actex {

void RmsNorm(const float* x, int64_t tokens, int64_t width, const float* weight, float eps,
             float* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    const float* row = x + t * width;
    float* out = y + t * width;
    // Double accumulation (four lanes) keeps the mean at float32's own precision for
    // any width.
    __m256d lanes = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 4 <= width; i += 4) {
      const __m256d values = _mm256_cvtps_pd(_mm_loadu_ps(row + i));
      lanes = _mm256_fmadd_pd(values, values, lanes);
    }
    alignas(32) double partial[4];
    _mm256_store_pd(partial, lanes);
    double sum_of_squares = (partial[0] + partial[1]) + (partial[2] + partial[3]);
    for (; i < width; ++i) sum_of_squares += static_cast<double>(row[i]) * row[i];
    const float variance = static_cast<float>(sum_of_squares / static_cast<double>(width));
    const float inverse_rms = 1.0f / std::sqrt(variance + eps);
    // weight · (x · rsqrt), eight lanes at a time: the same two roundings per element as
    // the scalar tail.
    const __m256 scale = _mm256_set1_ps(inverse_rms);
    for (i = 0; i + 8 <= width; i += 8) {
      const __m256 normalized = _mm256_mul_ps(_mm256_loadu_ps(row + i), scale);
      _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(weight + i), normalized));
    }
    for (; i < width; ++i) {
      const float normalized = row[i] * inverse_rms;
      out[i] = weight[i] * normalized;
    }
  }
}

}  // namespace actex
