#include "model/kernels/rotary.h"

#include <cmath>

namespace actex {

RotaryTable::RotaryTable(int head_dim, float theta) : half_(head_dim / 2) {
  inv_freq_.resize(half_);
  for (int j = 0; j < half_; ++j) {
    const float exponent = static_cast<float>(2 * j) / static_cast<float>(head_dim);
    inv_freq_[j] = 1.0f / std::pow(theta, exponent);
  }
}

RotaryTable::RotaryTable(std::vector<float> inv_freq)
    : half_(static_cast<int>(inv_freq.size())), inv_freq_(std::move(inv_freq)) {}

void RotaryTable::Reserve(int64_t end) {
  if (end <= positions_) return;
  cos_.resize(static_cast<size_t>(end * half_));
  sin_.resize(static_cast<size_t>(end * half_));
  for (int64_t position = positions_; position < end; ++position) {
    for (int j = 0; j < half_; ++j) {
      const float angle = static_cast<float>(position) * inv_freq_[j];
      cos_[position * half_ + j] = std::cos(angle);
      sin_[position * half_ + j] = std::sin(angle);
    }
  }
  positions_ = end;
}

void ApplyRotary(float* rows, int64_t tokens, int64_t ld, int heads, int head_dim,
                 const int32_t* positions, const RotaryTable& table) {
  const int half = head_dim / 2;
  for (int64_t t = 0; t < tokens; ++t) {
    const float* cos = table.cos(positions[t]);
    const float* sin = table.sin(positions[t]);
    for (int h = 0; h < heads; ++h) {
      float* x = rows + t * ld + static_cast<int64_t>(h) * head_dim;
      for (int j = 0; j < half; ++j) {
        const float first = x[j];
        const float second = x[j + half];
        x[j] = first * cos[j] + (-second) * sin[j];
        x[j + half] = second * cos[j] + first * sin[j];
      }
    }
  }
}

}  // namespace actex
