// A shard's forward on the CPU's cores (model/cpu_shard_device.h): the kernels of
// model/kernels on the shard's thread team. Shapes: `tokens` is the packed batch length,
// `hidden` the model's width, `heads`/`kv_heads` this shard's query/key-value heads.

#include "model/cpu_shard_device.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "model/blas_threads.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gelu.h"
#include "model/kernels/gemm.h"
#include "model/kernels/half_float.h"
#include "model/kernels/layer_norm.h"
#include "model/kernels/linear_products.h"
#include "model/kernels/rms_norm.h"
#include "model/kernels/rope_frequencies.h"
#include "model/kernels/rotary.h"
#include "model/kernels/swiglu.h"
#include "model/mixture_of_experts.h"

namespace actex {
namespace {

constexpr int64_t kRowGrain = kTeamRowGrain;
constexpr int64_t kElementGrain = kTeamElementGrain;

void AddInPlace(float* target, const float* addend, int64_t count) {
  for (int64_t i = 0; i < count; ++i) target[i] += addend[i];
}

class CpuShardDevice final : public ShardDevice {
 public:
  CpuShardDevice(const ShardSetup& setup, int threads, Precision precision)
      : config_(setup.config),
        slice_(setup.slice),
        weights_(setup.weights),
        heads_(setup.heads),
        team_(threads),
        products_(precision),
        attention_scratch_(static_cast<size_t>(team_.size())),
        activation_blocks_(static_cast<size_t>(team_.size())) {
    if (config_.rotary) {
      rotary_.emplace_back(RopeInverseFrequencies(config_.head_dim, config_.rope));
      if (config_.local_rope) {
        rotary_.emplace_back(RopeInverseFrequencies(config_.head_dim, *config_.local_rope));
      }
    }
    if (config_.moe.experts > 0) experts_ = std::make_unique<MixtureOfExperts>(config_, slice_);
  }

  std::string Describe() const override {
    const std::string threads = "cpu (" + std::to_string(team_.size()) + " threads, ";
    if (products_.precision() == Precision::kBf16) {
      return threads + "bf16 products by oneDNN on avx512_bf16)";
    }
    return threads + "fp32, " + GemmBackendName(PreferredGemmBackend(ActiveIsa())) + " on " +
           IsaName(ActiveIsa()) + ")";
  }
  ThreadTeam& team() override { return team_; }

  std::expected<void, std::string> BeginBatch(const PackedBatch& batch,
                                              int32_t max_position) override {
    batch_ = &batch;
    tokens_ = static_cast<int64_t>(batch.token_ids.size());
    rounded_input_ = nullptr;
    sequence_starts_.clear();
    for (int64_t start = 0; int32_t length : batch.sequence_lengths) {
      sequence_starts_.push_back(start);
      start += length;
    }
    for (RotaryTable& table : rotary_) table.Reserve(int64_t{max_position} + 1);
    // The team is the parallelism: OpenBLAS's own threads would only contend with it.
    if (BlasThreads() != 1) SetBlasThreads(1);
    return {};
  }
  std::expected<void, std::string> EndBatch() override {
    batch_ = nullptr;
    return {};
  }
  float* Reserve(Buffer buffer, int64_t floats) override {
    std::vector<float>& held = buffers_[static_cast<size_t>(buffer)];
    if (static_cast<int64_t>(held.size()) < floats) held.resize(static_cast<size_t>(floats));
    return held.data();
  }

  void Embed(float* resid_stream, float* scratch) override;
  void Normalize(const float* x, const std::vector<float>& weight, const std::vector<float>& bias,
                 float* y) override;
  void Linear(const float* x, std::initializer_list<Product> products) override {
    std::vector<LinearTarget> targets;
    targets.reserve(products.size());
    for (const Product& product : products) targets.push_back(Target(product));
    if (targets.empty()) return;
    // Normalize or Activate has rounded x for these products when x is what it wrote.
    const bool x_rounded = x == rounded_input_;
    rounded_input_ = nullptr;
    products_.Linear(x, products.begin()->weight.in_features(), tokens_, targets, &team_,
                     x_rounded);
  }
  void NormalizeHeads(const LayerShardWeights& w, float* queries, float* keys) override;
  void Rotate(int layer, float* queries, float* keys) override;
  void Attend(int layer, const float* queries, const float* keys, const float* values,
              float* context) override;
  void Activate(float* x, const float* up, int64_t count, bool tapped) override;
  void GatedLinear(const float* x, const Product& gate, const Product& up, int64_t count,
                   bool tapped) override;
  void AddBias(float* rows, const std::vector<float>& bias) override;
  void Accumulate(float* target, const float* addend) override {
    team_.ForRanges(tokens_ * config_.hidden, kElementGrain, [&](int64_t first, int64_t end, int) {
      AddInPlace(target + first, addend + first, end - first);
    });
  }

  std::expected<void, std::string> AllReduceSum(float* data, int64_t count,
                                                Collective& collective) override {
    return collective.AllReduceSum({data, static_cast<size_t>(count)});
  }
  std::span<const float> ToHost(const float* data, int64_t count, std::vector<float>*) override {
    return {data, static_cast<size_t>(count)};
  }
  void Tap(const float* data, int64_t count, float* host_target) override {
    std::memcpy(host_target, data, static_cast<size_t>(count) * sizeof(float));
  }

  std::expected<void, std::string> NormalizeWholeProjections(int layer, const LayerShardWeights& w,
                                                             float* queries, float* keys,
                                                             Collective& collective) override;
  std::expected<RoutingOutputs, std::string> SparseMlp(const LayerShardWeights& w,
                                                       const float* normed,
                                                       float* shard_sum) override {
    rounded_input_ = nullptr;  // the experts' products round into the same buffer
    experts_->Forward(w, normed, tokens_, shard_sum, products_, team_);
    return experts_->routing();
  }

 private:
  static LinearTarget Target(const Product& product) {
    return {&product.weight, product.bias.empty() ? nullptr : product.bias.data(), product.y,
            product.weight.out_features()};
  }

  const ModelConfig config_;
  const ShardSlice slice_;
  const ShardWeights& weights_;
  const AttentionHeads heads_;
  ThreadTeam team_;
  LinearProducts products_;                    // every product of the shard, at its precision
  std::vector<RotaryTable> rotary_;            // [global] or [global, local] (Gemma 3)
  std::unique_ptr<MixtureOfExperts> experts_;  // a mixture-of-experts family's MLP, else null

  std::array<std::vector<float>, kBufferCount> buffers_;
  std::vector<float> square_sums_;                     // [tokens, 2]: OLMoE's q and k norms
  std::vector<std::vector<float>> attention_scratch_;  // one per team member
  std::vector<std::vector<float>> activation_blocks_;  // one per team member (Activate)

  // Set between BeginBatch and EndBatch.
  const PackedBatch* batch_ = nullptr;
  int64_t tokens_ = 0;
  std::vector<int64_t> sequence_starts_;  // the first token of every sequence
  // bf16: the rows whose rounding to bfloat16 Normalize or Activate left for the next
  // Linear (products_.RoundedInput), as they wrote them; null once any product has run.
  // The loop writes nothing into those rows between the two steps.
  const float* rounded_input_ = nullptr;
};

void CpuShardDevice::Embed(float* resid_stream, float* scratch) {
  const int64_t hidden = config_.hidden;
  const auto* embed = static_cast<const uint8_t*>(weights_.embed.data);
  const auto* position_embed = static_cast<const uint8_t*>(weights_.position_embed.data);
  const int64_t embed_row_bytes = hidden * WeightDtypeBytes(weights_.embed.dtype);
  team_.ForRanges(tokens_, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      float* row = resid_stream + t * hidden;  // [hidden]
      WidenToFloat(embed + batch_->token_ids[t] * embed_row_bytes, weights_.embed.dtype, hidden,
                   row);
      if (config_.embed_scale > 0.0f) {
        for (int64_t i = 0; i < hidden; ++i) row[i] *= config_.embed_scale;
      }
      if (position_embed != nullptr) {
        float* position_row = scratch + t * hidden;  // [hidden]
        WidenToFloat(position_embed + batch_->positions[t] * embed_row_bytes,
                     weights_.position_embed.dtype, hidden, position_row);
        AddInPlace(row, position_row, hidden);
      }
    }
  });
}

void CpuShardDevice::Normalize(const float* x, const std::vector<float>& weight,
                               const std::vector<float>& bias, float* y) {
  const int64_t hidden = config_.hidden;
  const float eps = config_.rms_norm_eps;
  // In bf16 the products of y (q/k/v, gate/up) take it rounded here, while the rows are
  // still in the cache.
  uint16_t* rounded = products_.RoundedInput(tokens_ * hidden);  // [tokens, hidden]; or null
  team_.ForRanges(tokens_, kRowGrain, [&](int64_t first, int64_t end, int) {
    if (config_.norm == NormKind::kLayerNorm) {
      LayerNorm(x + first * hidden, end - first, hidden, weight.data(), bias.data(), eps,
                y + first * hidden);
    } else {
      RmsNorm(x + first * hidden, end - first, hidden, weight.data(), eps, y + first * hidden);
    }
    if (rounded != nullptr) {
      RoundToBFloat16(y + first * hidden, WeightDtype::kF32, (end - first) * hidden,
                      rounded + first * hidden);
    }
  });
  rounded_input_ = rounded != nullptr ? y : nullptr;
}

void CpuShardDevice::NormalizeHeads(const LayerShardWeights& w, float* queries, float* keys) {
  const int64_t dim = config_.head_dim;
  const int64_t q_width = heads_.heads * dim;
  const int64_t kv_width = heads_.kv_heads * dim;
  const float eps = config_.rms_norm_eps;
  team_.ForRanges(tokens_, kRowGrain, [&](int64_t first, int64_t end, int) {
    RmsNorm(queries + first * q_width, (end - first) * heads_.heads, dim, w.q_norm.data(), eps,
            queries + first * q_width);  // [tokens, heads*dim]
    RmsNorm(keys + first * kv_width, (end - first) * heads_.kv_heads, dim, w.k_norm.data(), eps,
            keys + first * kv_width);  // [tokens, kv_heads*dim]
  });
}

void CpuShardDevice::Rotate(int layer, float* queries, float* keys) {
  const int64_t dim = config_.head_dim;
  const int64_t q_width = heads_.heads * dim;
  const int64_t kv_width = heads_.kv_heads * dim;
  // Gemma 3's sliding layers have their own table.
  const RotaryTable& table = config_.local_rope && config_.Slides(layer) ? rotary_[1] : rotary_[0];
  const int32_t* positions = batch_->positions.data();
  team_.ForRanges(tokens_, kRowGrain, [&](int64_t first, int64_t end, int) {
    ApplyRotary(queries + first * q_width, end - first, q_width, heads_.heads,
                static_cast<int>(dim), positions + first, table);
    ApplyRotary(keys + first * kv_width, end - first, kv_width, heads_.kv_heads,
                static_cast<int>(dim), positions + first, table);
  });
}

void CpuShardDevice::Attend(int layer, const float* queries, const float* keys, const float* values,
                            float* context) {
  const int64_t dim = config_.head_dim;
  const int64_t q_width = heads_.heads * dim;
  const int64_t kv_width = heads_.kv_heads * dim;
  // One task per (sequence, head): attention never crosses sequences. Mistral and
  // Gemma's sliding layers see only the last sliding_window keys.
  const int heads = heads_.heads;
  AttentionHeads layer_heads = heads_;
  layer_heads.window = config_.Slides(layer) ? config_.sliding_window : 0;
  const int64_t tasks = static_cast<int64_t>(batch_->sequence_lengths.size()) * heads;
  team_.Run(tasks, [&](int64_t task, int member) {
    const int64_t sequence = task / heads;
    const int local = static_cast<int>(task % heads);
    const int64_t first = sequence_starts_[sequence];
    AttentionHeads one_head = layer_heads;
    one_head.first_head = layer_heads.first_head + local;
    one_head.heads = 1;
    CausalAttention(queries + first * q_width + local * dim, keys + first * kv_width,
                    values + first * kv_width, q_width, kv_width,
                    batch_->sequence_lengths[sequence], one_head,
                    context + first * q_width + local * dim,
                    &attention_scratch_[member]);  // [length, dim] of head `local`
  });
}

void CpuShardDevice::Activate(float* x, const float* up, int64_t count, bool tapped) {
  // In bf16 the down product's X is rounded here, each block while it is still in the
  // cache, rather than by a pass of the product's own over [tokens, columns]; untapped,
  // the float32 block goes only to the member's L1-sized scratch, so x is not written
  // (nor written back to memory) at all.
  uint16_t* rounded = products_.RoundedInput(count);  // [tokens, columns]; null in fp32
  constexpr int64_t kBlock = 4096;                    // 16 KiB of float32: L1-sized
  const bool float32_kept = rounded == nullptr || tapped;
  if (!float32_kept) {
    for (std::vector<float>& scratch : activation_blocks_) scratch.resize(kBlock);
  }
  team_.ForRanges(count, kElementGrain, [&](int64_t first, int64_t end, int member) {
    for (int64_t block = first; block < end; block += kBlock) {
      const int64_t length = std::min(kBlock, end - block);
      float* out = float32_kept ? x + block : activation_blocks_[member].data();  // [length]
      switch (config_.mlp) {
        case MlpKind::kGeluTanh:
          GeluTanh(x + block, length, out);
          break;
        case MlpKind::kGatedSilu:
          SwiGlu(x + block, up + block, length, out);
          break;
        case MlpKind::kGatedGeluTanh:
          GeGlu(x + block, up + block, length, out);
          break;
      }
      if (rounded != nullptr) RoundToBFloat16(out, WeightDtype::kF32, length, rounded + block);
    }
  });
  rounded_input_ = rounded != nullptr ? x : nullptr;
}

void CpuShardDevice::GatedLinear(const float* x, const Product& gate, const Product& up,
                                 int64_t count, bool tapped) {
  if (products_.precision() != Precision::kBf16) {
    ShardDevice::GatedLinear(x, gate, up, count, tapped);
    return;
  }
  // In bf16 the products of a tile of features and their activation run together in
  // cache, and the activation is rounded for the down product as it is written.
  const bool x_rounded = x == rounded_input_;
  const int64_t columns = gate.weight.out_features();
  products_.Bf16GatedLinear(x, gate.weight.in_features(), tokens_, Target(gate), Target(up),
                            config_.mlp == MlpKind::kGatedSilu ? SwiGlu : GeGlu,
                            tapped ? gate.y : nullptr, columns, &team_, x_rounded);
  rounded_input_ = gate.y;
}

void CpuShardDevice::AddBias(float* rows, const std::vector<float>& bias) {
  if (bias.empty()) return;
  const int64_t hidden = config_.hidden;
  team_.ForRanges(tokens_, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) AddInPlace(rows + t * hidden, bias.data(), hidden);
  });
}

std::expected<void, std::string> CpuShardDevice::NormalizeWholeProjections(
    int layer, const LayerShardWeights& w, float* queries, float* keys, Collective& collective) {
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
  team_.ForRanges(tokens_, kRowGrain, [&](int64_t first, int64_t end, int) {
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
  team_.ForRanges(tokens_, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      scale_row(queries + t * q_width, q_width, sums[2 * t], q_count, w.q_norm.data());
      scale_row(keys + t * kv_width, kv_width, sums[2 * t + 1], kv_count, w.k_norm.data());
    }
  });
  return {};
}

}  // namespace

ShardDeviceMaker CpuShardDevices(int threads, Precision precision) {
  return [threads, precision](
             const ShardSetup& setup) -> std::expected<std::unique_ptr<ShardDevice>, std::string> {
    if (threads < 1) {
      return std::unexpected("a shard needs at least one thread, not " + std::to_string(threads));
    }
    if (auto isa = CheckIsaOverride(); !isa) return std::unexpected(isa.error());
    if (precision == Precision::kBf16) {
      if (auto bf16 = Bf16ProductsSupported(); !bf16) {
        return std::unexpected("--precision bf16 on the CPU: " + bf16.error());
      }
    }
    return std::make_unique<CpuShardDevice>(setup, threads, precision);
  };
}

}  // namespace actex
