// Every norm of a CPU shard (cpu_shard_device_internal.h): the layers' RMSNorm or
// LayerNorm, Qwen3's and Gemma 3's per-head q/k norms, OLMoE's whole-projection ones.

#include <cmath>
#include <string>

#include "base/bfloat16.h"
#include "model/cpu_shard_device_internal.h"
#include "model/kernels/layer_norm.h"
#include "model/kernels/rms_norm.h"

namespace actex {

void CpuShardDevice::Normalize(const float* x, const std::vector<float>& weight,
                               const std::vector<float>& bias, float* y) {
  const int64_t hidden = config_.hidden;
  const float eps = config_.rms_norm_eps;
  // In bf16 the products of y (q/k/v, gate/up) take it rounded here, while the rows are
  // still in the cache.
  uint16_t* rounded = products_.RoundedInput(tokens_ * hidden);  // [tokens, hidden]; or null
  team_.ForRanges(tokens_, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    if (config_.norm == NormKind::kLayerNorm) {
      LayerNorm(x + first * hidden, end - first, hidden, weight.data(), bias.data(), eps,
                y + first * hidden);
    } else {
      RmsNorm(x + first * hidden, end - first, hidden, weight.data(), eps, y + first * hidden);
    }
    if (rounded != nullptr) {
      ConvertToBfloat16({y + first * hidden, static_cast<size_t>((end - first) * hidden)},
                        rounded + first * hidden);
    }
  });
  rounded_input_ = rounded != nullptr ? y : nullptr;
}

void CpuShardDevice::NormalizeHeads(const LayerShardWeights& w, float* queries, float* keys) {
  ForgetRounding();
  const int64_t dim = config_.head_dim;
  const int64_t q_width = heads_.heads * dim;
  const int64_t kv_width = heads_.kv_heads * dim;
  const float eps = config_.rms_norm_eps;
  team_.ForRanges(tokens_, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    RmsNorm(queries + first * q_width, (end - first) * heads_.heads, dim, w.q_norm.data(), eps,
            queries + first * q_width);  // [tokens, heads*dim]
    RmsNorm(keys + first * kv_width, (end - first) * heads_.kv_heads, dim, w.k_norm.data(), eps,
            keys + first * kv_width);  // [tokens, kv_heads*dim]
  });
}

std::expected<void, std::string> CpuShardDevice::NormalizeWholeProjections(
    int layer, const LayerShardWeights& w, float* queries, float* keys, Collective& collective) {
  ForgetRounding();
  const int64_t dim = config_.head_dim;
  const int64_t q_width = heads_.heads * dim;
  const int64_t kv_width = heads_.kv_heads * dim;
  const KeyColumns counted = CountedKeyColumns(config_, slice_);
  if (static_cast<int64_t>(square_sums_.size()) < 2 * tokens_) {
    square_sums_.resize(static_cast<size_t>(2 * tokens_));
  }
  float* sums = square_sums_.data();  // [tokens, 2]
  auto sum_of_squares = [](const float* row, int64_t first, int64_t end) {
    double sum = 0.0;
    for (int64_t i = first; i < end; ++i) sum += static_cast<double>(row[i]) * row[i];
    return static_cast<float>(sum);
  };
  team_.ForRanges(tokens_, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      sums[2 * t] = sum_of_squares(queries + t * q_width, 0, q_width);
      sums[2 * t + 1] = sum_of_squares(keys + t * kv_width, counted.first, counted.end);
    }
  });
  auto reduced = collective.AllReduceSum({sums, static_cast<size_t>(2 * tokens_)});
  if (!reduced) {
    return std::unexpected("all-reduce of q_norm/k_norm of layer " + std::to_string(layer) + ": " +
                           reduced.error());
  }
  // As RmsNorm: x · rsqrt(mean + eps) rounded, then times the weight.
  const float q_count = static_cast<float>(config_.heads * dim);
  const float kv_count = static_cast<float>(config_.kv_heads * dim);
  const float eps = config_.rms_norm_eps;
  auto scale_row = [eps](float* row, int64_t width, float sum, float count, const float* weight) {
    const float inverse_rms = 1.0f / std::sqrt(sum / count + eps);
    for (int64_t i = 0; i < width; ++i) {
      const float normalized = row[i] * inverse_rms;
      row[i] = weight[i] * normalized;
    }
  };
  team_.ForRanges(tokens_, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      scale_row(queries + t * q_width, q_width, sums[2 * t], q_count, w.q_norm.data());
      scale_row(keys + t * kv_width, kv_width, sums[2 * t + 1], kv_count, w.k_norm.data());
    }
  });
  return {};
}

}  // namespace actex
