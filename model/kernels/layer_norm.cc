#include "model/kernels/layer_norm.h"

#include <immintrin.h>

#include <cmath>

namespace actex {
namespace {

// The sum of row[i] - center over the row in double, four lanes at a time (the lanes
// hide the add latency that made a one-accumulator loop the slowest part of GPT-2's
// layer), squared when `square` is set.
double RowSum(const float* row, int64_t width, double center, bool square) {
  const __m256d shift = _mm256_set1_pd(center);
  __m256d lanes = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= width; i += 4) {
    const __m256d values = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(row + i)), shift);
    lanes = square ? _mm256_fmadd_pd(values, values, lanes) : _mm256_add_pd(lanes, values);
  }
  alignas(32) double partial[4];
  _mm256_store_pd(partial, lanes);
  double sum = (partial[0] + partial[1]) + (partial[2] + partial[3]);
  for (; i < width; ++i) {
    const double value = row[i] - center;
    sum += square ? value * value : value;
  }
  return sum;
}

}  // namespace

void LayerNorm(const float* x, int64_t tokens, int64_t width, const float* weight,
               const float* bias, float eps, float* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    const float* row = x + t * width;
    float* out = y + t * width;
    const double mean = RowSum(row, width, 0.0, false) / static_cast<double>(width);
    const double squares = RowSum(row, width, mean, true);
    const float inverse_std =
        static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(width) + eps));
    const float mean_f = static_cast<float>(mean);
    // ((x - mean) · inverse_std) · weight + bias, rounded after each step.
    const __m256 mean_lanes = _mm256_set1_ps(mean_f), scale = _mm256_set1_ps(inverse_std);
    int64_t i = 0;
    for (; i + 8 <= width; i += 8) {
      const __m256 normalized =
          _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(row + i), mean_lanes), scale);
      _mm256_storeu_ps(out + i,
                       _mm256_add_ps(_mm256_mul_ps(normalized, _mm256_loadu_ps(weight + i)),
                                     _mm256_loadu_ps(bias + i)));
    }
    for (; i < width; ++i) out[i] = (row[i] - mean_f) * inverse_std * weight[i] + bias[i];
  }
}

}  // namespace actex
