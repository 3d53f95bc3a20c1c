#ifndef ACTEX_MODEL_CPU_SHARD_DEVICE_INTERNAL_H_
#define ACTEX_MODEL_CPU_SHARD_DEVICE_INTERNAL_H_

// The CPU's ShardDevice (cpu_shard_device.h makes it), shared by its two source files:
// cpu_shard_device.cc (the batch, embeddings, rotary, attention, the MLP's activation)
// and cpu_shard_device_norms.cc (every norm). Shapes: `tokens` is the packed batch
// length, `hidden` the model's width, `heads`/`kv_heads` this shard's query/key-value
// heads. Only those files include it.

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/blas_threads.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"
#include "model/kernels/huge_pages.h"
#include "model/kernels/linear_products.h"
#include "model/kernels/rope_frequencies.h"
#include "model/kernels/rotary.h"
#include "model/mixture_of_experts.h"
#include "model/precision.h"
#include "model/shard_device.h"

namespace actex {

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
      return threads + "bf16 products by oneDNN on " + Bf16ProductUnits() + ")";
    }
    return threads + "fp32, " + GemmBackendName(PreferredGemmBackend(ActiveIsa())) + " on " +
           IsaName(ActiveIsa()) + ")";
  }
  ThreadTeam& team() override { return team_; }

  std::expected<void, std::string> BeginBatch(const PackedBatch& batch,
                                              int32_t max_position) override {
    batch_ = &batch;
    tokens_ = static_cast<int64_t>(batch.token_ids.size());
    ForgetRounding();
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
    HugePageVector<float>& held = buffers_[static_cast<size_t>(buffer)];
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
    // Normalize, Activate or GatedLinear has rounded x for these products when x is what
    // it wrote.
    const bool x_rounded = x == rounded_input_;
    ForgetRounding();
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
    ForgetRounding();
    team_.ForRanges(tokens_ * config_.hidden, kTeamElementGrain,
                    [&](int64_t first, int64_t end, int) {
                      AddInPlace(target + first, addend + first, end - first);
                    });
  }

  std::expected<void, std::string> AllReduceSum(float* data, int64_t count,
                                                Collective& collective) override {
    ForgetRounding();
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
    ForgetRounding();  // the experts' products round into the same buffer
    experts_->Forward(w, normed, tokens_, shard_sum, products_, team_);
    return experts_->routing();
  }

 private:
  // Every step that writes activations (but Normalize, Activate and GatedLinear, which
  // leave their own rounding) drops the rounding left for the next Linear: rows it
  // changed must be rounded again, whatever their address.
  void ForgetRounding() { rounded_input_ = nullptr; }
  static void AddInPlace(float* target, const float* addend, int64_t count) {
    for (int64_t i = 0; i < count; ++i) target[i] += addend[i];
  }
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

  std::array<HugePageVector<float>, kBufferCount> buffers_;
  std::vector<float> square_sums_;                     // [tokens, 2]: OLMoE's q and k norms
  std::vector<std::vector<float>> attention_scratch_;  // one per team member
  std::vector<std::vector<float>> activation_blocks_;  // one per team member (Activate)

  // Set between BeginBatch and EndBatch.
  const PackedBatch* batch_ = nullptr;
  int64_t tokens_ = 0;
  std::vector<int64_t> sequence_starts_;  // the first token of every sequence
  // bf16: the rows whose rounding to bfloat16 Normalize, Activate or GatedLinear left for
  // the next Linear (products_.RoundedInput), as they wrote them; null once any product
  // or any other writing step (ForgetRounding) has run, so only Taps may come between.
  const float* rounded_input_ = nullptr;
};

}  // namespace actex

#endif  // ACTEX_MODEL_CPU_SHARD_DEVICE_INTERNAL_H_
