#ifndef ACTEX_MODEL_KERNELS_ROTARY_H_
#define ACTEX_MODEL_KERNELS_ROTARY_H_

#include <cstdint>
#include <vector>

namespace actex {

// HF's rotary tables, built in float32 exactly as Qwen2RotaryEmbedding builds them:
//   inv_freq[j] = 1 / theta^((2j) / head_dim)   (float32 pow and division)
//   angle = float(position) * inv_freq[j]       (float32 product)
//   cos/sin of the float32 angle.
// Only half a row is stored: HF's table is cat(freqs, freqs).
class RotaryTable {
 public:
  RotaryTable(int head_dim, float theta);
  // A table over given inverse frequencies ([head_dim / 2]; see rope_frequencies.h).
  explicit RotaryTable(std::vector<float> inv_freq);

  // Makes positions [0, end) available; grows, never shrinks.
  void Reserve(int64_t end);
  int64_t size() const { return positions_; }

  const float* cos(int64_t position) const { return cos_.data() + position * half_; }
  const float* sin(int64_t position) const { return sin_.data() + position * half_; }

 private:
  int half_;
  std::vector<float> inv_freq_;
  int64_t positions_ = 0;
  std::vector<float> cos_, sin_;
};

// Rotates `heads` heads of `head_dim` in every row of `rows` ([tokens, ld]) in place,
// in the rotate_half layout that pairs dimension j with j + head_dim/2:
//   out = x * cos + rotate_half(x) * sin,  rotate_half(x) = cat(-x[half:], x[:half]).
// Every position must be < table.size().
void ApplyRotary(float* rows, int64_t tokens, int64_t ld, int heads, int head_dim,
                 const int32_t* positions, const RotaryTable& table);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_ROTARY_H_
