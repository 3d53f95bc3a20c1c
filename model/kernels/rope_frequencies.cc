#include "model/kernels/rope_frequencies.h"

#include <cmath>
#include <numbers>

namespace actex {

std::vector<float> RopeInverseFrequencies(int head_dim, const RopeConfig& rope) {
  const int half = head_dim / 2;
  std::vector<float> inv_freq(static_cast<size_t>(half));
  for (int j = 0; j < half; ++j) {
    const float exponent = static_cast<float>(2 * j) / static_cast<float>(head_dim);
    inv_freq[j] = 1.0f / std::pow(rope.theta, exponent);
  }
  switch (rope.scaling) {
    case RopeScaling::kNone:
      break;
    case RopeScaling::kLinear:
      for (float& f : inv_freq) f = f / rope.factor;
      break;
    case RopeScaling::kLlama3: {
      const float original = rope.original_max_positions;
      const float low_wavelen = original / rope.low_freq_factor;
      const float high_wavelen = original / rope.high_freq_factor;
      for (float& f : inv_freq) {
        const float wavelen = static_cast<float>(2.0 * std::numbers::pi) / f;
        if (wavelen < high_wavelen) continue;  // high frequency: unchanged
        if (wavelen > low_wavelen) {
          f = f / rope.factor;
          continue;
        }
        const float smooth = (original / wavelen - rope.low_freq_factor) /
                             (rope.high_freq_factor - rope.low_freq_factor);
        f = (1.0f - smooth) * f / rope.factor + smooth * f;
      }
      break;
    }
  }
  return inv_freq;
}

}  // namespace actex
