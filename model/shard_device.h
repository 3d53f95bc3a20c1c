#ifndef ACTEX_MODEL_SHARD_DEVICE_H_
#define ACTEX_MODEL_SHARD_DEVICE_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/collective.h"
#include "model/expert_routing.h"
#include "model/kernels/attention.h"
#include "model/kernels/linear.h"
#include "model/kernels/thread_team.h"
#include "model/model_config.h"
#include "model/packed_batch.h"
#include "model/shard_plan.h"
#include "model/shard_weights.h"

namespace actex {

// What a device is told of its shard when it is made. `weights` outlives the device.
struct ShardSetup {
  const ModelConfig& config;
  const ShardSlice& slice;
  const ShardWeights& weights;  // layers [0, last_layer]
  const AttentionHeads& heads;  // this shard's query and key/value heads
  int last_layer = -1;          // the deepest layer the forward runs
};

// Where one shard's forward runs: the CPU's cores (model/cpu_shard_device.h) or a GPU
// (gpu/cuda_shard_device.h). The decoder loop (decoder_forward.cc) is the one
// description of every family's forward; it asks its device for each step.
//
// Contract:
// - Activations live in the device's own memory (host memory on the CPU, GPU memory on
//   a GPU): the loop gets them from Reserve and only hands them back to the device.
// - Weights are named by the ShardWeights members given at creation (`w.q`,
//   `w.q_bias`, `weights.final_norm`, ...): a device that computes elsewhere finds its
//   own copy of a tensor by that member's address. An empty vector means "none".
// - Every step works on all rows of the batch given to BeginBatch, in call order;
//   results reach the host only through Tap (complete after EndBatch) and ToHost.
class ShardDevice {
 public:
  // The activations a forward reuses from batch to batch.
  enum class Buffer { kResid, kNormed, kQueries, kKeys, kValues, kContext, kPartial, kGate, kUp };
  static constexpr int kBufferCount = static_cast<int>(Buffer::kUp) + 1;

  virtual ~ShardDevice() = default;

  // What the node's ready line says of it: the device, its precision and its library.
  virtual std::string Describe() const = 0;
  // Host threads that are idle between forwards (rank 0 encodes SAE latents on them).
  virtual ThreadTeam& team() = 0;

  // Starts a checked batch (DecoderShardState::CheckBatch; its positions are at most
  // `max_position`); `batch` stays valid until EndBatch.
  virtual std::expected<void, std::string> BeginBatch(const PackedBatch& batch,
                                                      int32_t max_position) = 0;
  // Waits until every Tap of the batch has reached the host.
  virtual std::expected<void, std::string> EndBatch() = 0;
  // At least `floats` floats of `buffer`, kept across batches (grown, never shrunk).
  virtual float* Reserve(Buffer buffer, int64_t floats) = 0;

  // HF hidden_states[0]: embed rows (times the embedding scale, plus the learned
  // position rows) into `resid_stream` ([tokens, hidden]); `scratch` [tokens, hidden].
  virtual void Embed(float* resid_stream, float* scratch) = 0;
  // y = norm(x) per row of [tokens, hidden]: RMSNorm, or LayerNorm with `bias`
  // (config.norm); `x` may be `y`.
  virtual void Normalize(const float* x, const std::vector<float>& weight,
                         const std::vector<float>& bias, float* y) = 0;
  // One product of a Linear step: y[tokens, out] = x[tokens, in] · weightᵀ (+ bias[out]);
  // in and out are the slice's.
  struct Product {
    const WeightSlice& weight;
    const std::vector<float>& bias;  // empty: none
    float* y;                        // [tokens, out]
  };
  // Every product of one x (q, k and v of the same normed rows; gate and up; or a single
  // one), in any order: a device may share the work of x between them (the CPU rounds x
  // to bfloat16 once and runs all their shares as one job of its team).
  virtual void Linear(const float* x, std::initializer_list<Product> products) = 0;
  // Qwen3's and Gemma 3's RMSNorm over each head's dim (w.q_norm, w.k_norm), in place on
  // `queries` [tokens, heads*dim] and `keys` [tokens, kv_heads*dim].
  virtual void NormalizeHeads(const LayerShardWeights& w, float* queries, float* keys) = 0;
  // Rotary embedding of `layer`'s table at the batch's positions, in place.
  virtual void Rotate(int layer, float* queries, float* keys) = 0;
  // Causal attention of `layer` (its sliding window, if any) within each sequence:
  // queries [tokens, heads*dim], keys and values [tokens, kv_heads*dim] into `context`
  // [tokens, heads*dim].
  virtual void Attend(int layer, const float* queries, const float* keys, const float* values,
                      float* context) = 0;
  // The MLP's activation over `count` values, in place on `x` (config.mlp): silu(x)·up,
  // gelu_tanh(x)·up, or GPT-2's gelu_tanh(x) (`up` null). Unless `tapped` (a Tap of x
  // follows), only the next Linear reads x, and a device may hand it the activation in
  // its own form alone (the CPU's bf16: rounded to bfloat16), leaving x as it was.
  virtual void Activate(float* x, const float* up, int64_t count, bool tapped) = 0;
  // A gated MLP's hidden activation (config.mlp: silu or gelu_tanh), `count` values:
  //   gate.y = act(x · gate.weightᵀ + gate.bias) · (x · up.weightᵀ + up.bias)
  // with up.y the device's to use as scratch; `tapped` as Activate's. This is Linear of
  // both, then Activate; a device may fuse the steps (the CPU's bf16 does, a tile of
  // features at a time, so gate and up never leave the cache).
  virtual void GatedLinear(const float* x, const Product& gate, const Product& up, int64_t count,
                           bool tapped) {
    Linear(x, {gate, up});
    Activate(gate.y, up.y, count, tapped);
  }
  // rows [tokens, hidden] += bias [hidden] (none when empty); target += addend over
  // [tokens, hidden].
  virtual void AddBias(float* rows, const std::vector<float>& bias) = 0;
  virtual void Accumulate(float* target, const float* addend) = 0;

  // Sums `count` floats of `data` over the shards of `collective`, in place.
  virtual std::expected<void, std::string> AllReduceSum(float* data, int64_t count,
                                                        Collective& collective) = 0;
  // `count` floats of `data` in host memory now: `data` itself on the CPU, else a copy in
  // `staging`.
  virtual std::span<const float> ToHost(const float* data, int64_t count,
                                        std::vector<float>* staging) = 0;
  // Copies `count` floats of `data` to `host_target` by EndBatch; `data` may change
  // right after the call.
  virtual void Tap(const float* data, int64_t count, float* host_target) = 0;

  // OLMoE's q_norm/k_norm over the whole projections (decoder_state.h).
  virtual std::expected<void, std::string> NormalizeWholeProjections(int layer,
                                                                     const LayerShardWeights& w,
                                                                     float* queries, float* keys,
                                                                     Collective& collective) = 0;
  // A mixture-of-experts layer's MLP on `normed` ([tokens, hidden]): this shard's
  // partial sum into `shard_sum` ([tokens, hidden]); the routing stays readable until
  // the next call.
  virtual std::expected<RoutingOutputs, std::string> SparseMlp(const LayerShardWeights& w,
                                                               const float* normed,
                                                               float* shard_sum) = 0;
};

// Makes the device of one shard; DecoderShard::Create calls it once its weights are
// sliced.
using ShardDeviceMaker =
    std::function<std::expected<std::unique_ptr<ShardDevice>, std::string>(const ShardSetup&)>;

}  // namespace actex

#endif  // ACTEX_MODEL_SHARD_DEVICE_H_
