#ifndef ACTEX_GPU_CUDA_SHARD_DEVICE_INTERNAL_H_
#define ACTEX_GPU_CUDA_SHARD_DEVICE_INTERNAL_H_

// A shard's forward on a GPU (gpu/cuda_shard_device.h). Every step is queued on the
// shard's compute stream; taps are copied on a second stream; the host waits only at an
// all-reduce across shards, at ToHost, and at EndBatch. Steps return nothing, so the
// first CUDA error is kept (StickyError), later steps are skipped, and EndBatch reports
// it. Shapes: `tokens` is the packed batch length, `hidden` the model's width.
// The class and its steps that queue one kernel; cuda_shard_device.cc holds the steps
// that wait or copy (the batch, taps, all-reduces) and the maker. Nothing else includes it.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/cuda_shard_device.h"
#include "gpu/cuda_status.h"
#include "gpu/device_memory.h"
#include "gpu/device_weights.h"
#include "gpu/gpu_experts.h"
#include "gpu/kernels/attention.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/norms.h"
#include "gpu/shard_streams.h"
#include "model/kernels/rope_frequencies.h"
#include "model/kernels/rotary.h"

namespace actex::gpu_internal {

using gpu::DeviceMemory;

// One rotary table on the host (HF's float32 values) and its copy on the GPU.
struct DeviceRotary {
  explicit DeviceRotary(std::vector<float> inverse_frequencies)
      : table(std::move(inverse_frequencies)) {}
  RotaryTable table;
  DeviceMemory cos, sin;  // [positions, head_dim / 2]
  int64_t uploaded = 0;   // positions on the GPU
};

// A tap in flight: the value copied on the GPU, then to pinned memory, then to the capture.
struct TapSlot {
  DeviceMemory on_gpu;
  DeviceMemory pinned{DeviceMemory::Kind::kPinnedHost};
  float* target = nullptr;
  int64_t count = 0;
};

class CudaShardDevice final : public ShardDevice {
 public:
  CudaShardDevice(const ShardSetup& setup, const CudaOptions& options, gpu::ShardStreams streams,
                  gpu::DeviceWeights weights)
      : config_(setup.config),
        options_(options),
        streams_(std::move(streams)),
        weights_(std::move(weights)),
        team_(options.host_threads),
        shape_{.heads = setup.heads.heads,
               .kv_heads = setup.heads.kv_heads,
               .first_head = setup.heads.first_head,
               .first_kv_head = setup.heads.first_kv_head,
               .group = setup.heads.group,
               .head_dim = setup.heads.head_dim,
               .multiplier = setup.heads.scale_multiplier,
               .softcap = setup.heads.softcap},
        slice_(setup.slice),
        widest_input_(std::max<int64_t>(
            {config_.hidden, int64_t{shape_.heads} * config_.head_dim,
             int64_t{setup.slice.end_intermediate} - setup.slice.first_intermediate,
             int64_t{setup.slice.end_expert_column} - setup.slice.first_expert_column,
             int64_t{setup.slice.end_shared_column} - setup.slice.first_shared_column})) {
    if (config_.moe.experts > 0) experts_ = std::make_unique<gpu::GpuExperts>(config_, slice_);
    if (config_.rotary) {
      rotary_.emplace_back(RopeInverseFrequencies(config_.head_dim, config_.rope));
      if (config_.local_rope) {
        rotary_.emplace_back(RopeInverseFrequencies(config_.head_dim, *config_.local_rope));
      }
    }
  }

  // The members free their GPU memory on the calling thread's current device, before
  // streams_ (the last to go) selects its GPU: select it first, as the thread that
  // destroys a shard may be another than the one that made it, with another GPU current.
  ~CudaShardDevice() override { (void)streams_.MakeCurrent(); }

  std::string Describe() const override { return streams_.Describe(options_.precision); }
  ThreadTeam& team() override { return team_; }

  std::expected<void, std::string> BeginBatch(const PackedBatch& batch,
                                              int32_t max_position) override;
  std::expected<void, std::string> EndBatch() override;
  float* Reserve(Buffer buffer, int64_t floats) override {
    DeviceMemory& memory = buffers_[static_cast<size_t>(buffer)];
    auto reserved = memory.Reserve(static_cast<size_t>(floats) * sizeof(float));
    if (!reserved) {  // the batch's size is what to change: say which flag sets it
      reserved = std::unexpected("the forward's buffers of a batch of " + std::to_string(tokens_) +
                                 " tokens (--batch-tokens): " + reserved.error());
    }
    error_.Keep(reserved);
    return memory.as<float>();
  }

  void Embed(float* resid_stream, float*) override {
    if (error_.failed()) return;
    const gpu::DeviceTensor& embed = weights_.embed();
    Launched(gpu::EmbedRows(embed.data, weights_.position_embed().data, embed.dtype, config_.hidden,
                            ids_.as<int32_t>(), positions_.as<int32_t>(), tokens_,
                            config_.embed_scale, resid_stream, stream()),
             "launching EmbedRows");
  }
  void Normalize(const float* x, const std::vector<float>& weight, const std::vector<float>& bias,
                 float* y) override {
    if (error_.failed()) return;
    if (config_.norm == NormKind::kLayerNorm) {
      Launched(gpu::LayerNormRows(x, tokens_, config_.hidden, weights_.Vector(weight),
                                  weights_.Vector(bias), config_.rms_norm_eps, y, stream()),
               "launching LayerNormRows");
    } else {
      Launched(gpu::RmsNormRows(x, tokens_, config_.hidden, weights_.Vector(weight),
                                config_.rms_norm_eps, y, stream()),
               "launching RmsNormRows");
    }
  }
  void Linear(const float* x, std::initializer_list<Product> products) override {
    bool x_rounded = false;  // x is rounded to bfloat16 once for all the products
    for (const Product& product : products) {
      if (error_.failed()) return;
      const gpu::DeviceTensor& matrix = weights_.Matrix(product.weight);
      error_.Keep(streams_.Product(x, tokens_, matrix, product.y, options_.precision, x_rounded));
      x_rounded = x_rounded || gpu::ShardStreams::RoundsInput(matrix, options_.precision);
      if (!product.bias.empty()) {
        Launched(gpu::AddBiasRows(product.y, tokens_, product.weight.out_features(),
                                  weights_.Vector(product.bias), stream()),
                 "launching AddBiasRows");
      }
    }
  }
  void NormalizeHeads(const LayerShardWeights& w, float* queries, float* keys) override {
    if (error_.failed()) return;
    Launched(gpu::RmsNormRows(queries, tokens_ * shape_.heads, shape_.head_dim,
                              weights_.Vector(w.q_norm), config_.rms_norm_eps, queries, stream()),
             "launching RmsNormRows");
    Launched(gpu::RmsNormRows(keys, tokens_ * shape_.kv_heads, shape_.head_dim,
                              weights_.Vector(w.k_norm), config_.rms_norm_eps, keys, stream()),
             "launching RmsNormRows");
  }
  void Rotate(int layer, float* queries, float* keys) override {
    if (error_.failed()) return;
    // Gemma 3's sliding layers have their own table.
    const DeviceRotary& rotary = rotary_[config_.local_rope && config_.Slides(layer) ? 1 : 0];
    const int dim = shape_.head_dim;
    Launched(gpu::RotateRows(queries, tokens_, int64_t{shape_.heads} * dim, shape_.heads, dim,
                             positions_.as<int32_t>(), rotary.cos.as<float>(),
                             rotary.sin.as<float>(), stream()),
             "launching RotateRows");
    Launched(gpu::RotateRows(keys, tokens_, int64_t{shape_.kv_heads} * dim, shape_.kv_heads, dim,
                             positions_.as<int32_t>(), rotary.cos.as<float>(),
                             rotary.sin.as<float>(), stream()),
             "launching RotateRows");
  }
  void Attend(int layer, const float* queries, const float* keys, const float* values,
              float* context) override {
    if (error_.failed()) return;
    gpu::AttentionShape shape = shape_;
    shape.window = config_.Slides(layer) ? config_.sliding_window : 0;
    Launched(gpu::CausalAttention(queries, keys, values, sequence_start_.as<int32_t>(), tokens_,
                                  shape, context, stream()),
             "launching CausalAttention");
  }
  void Activate(float* x, const float* up, int64_t count, bool) override {
    if (error_.failed()) return;
    const gpu::Activation activation =
        config_.mlp == MlpKind::kGatedSilu       ? gpu::Activation::kSiluTimesUp
        : config_.mlp == MlpKind::kGatedGeluTanh ? gpu::Activation::kGeluTanhTimesUp
                                                 : gpu::Activation::kGeluTanh;
    Launched(gpu::Activate(activation, x, up, count, stream()), "launching Activate");
  }
  void AddBias(float* rows, const std::vector<float>& bias) override {
    if (error_.failed() || bias.empty()) return;
    Launched(gpu::AddBiasRows(rows, tokens_, config_.hidden, weights_.Vector(bias), stream()),
             "launching AddBiasRows");
  }
  void Accumulate(float* target, const float* addend) override {
    if (error_.failed()) return;
    Launched(gpu::AddInPlace(target, addend, tokens_ * config_.hidden, stream()),
             "launching AddInPlace");
  }

  std::expected<void, std::string> AllReduceSum(float* data, int64_t count,
                                                Collective& collective) override;
  std::span<const float> ToHost(const float* data, int64_t count,
                                std::vector<float>* staging) override;
  void Tap(const float* data, int64_t count, float* host_target) override;

  std::expected<void, std::string> NormalizeWholeProjections(int layer, const LayerShardWeights& w,
                                                             float* queries, float* keys,
                                                             Collective& collective) override;
  std::expected<RoutingOutputs, std::string> SparseMlp(const LayerShardWeights& w,
                                                       const float* normed,
                                                       float* shard_sum) override {
    auto held = error_.Take();
    if (!held) return std::unexpected(held.error());
    return experts_->Forward(w, normed, tokens_, shard_sum, streams_, weights_, options_.precision);
  }

 private:
  // Keeps a kernel's launch error (gpu/kernels/launch.h) under `what` ("launching
  // RmsNormRows"), so that the batch's error names the kernel.
  void Launched(cudaError_t launch, std::string_view what) {
    error_.Keep(gpu::CudaOk(launch, what));
  }
  cudaStream_t stream() const { return streams_.compute(); }
  std::expected<void, std::string> UploadRotary(int32_t max_position);

  const ModelConfig config_;
  const CudaOptions options_;
  gpu::ShardStreams streams_;  // first to be made, last to go: the others free into it
  gpu::DeviceWeights weights_;
  ThreadTeam team_;
  const gpu::AttentionShape shape_;
  const ShardSlice slice_;
  const int64_t widest_input_;                // the most input features of any product
  std::unique_ptr<gpu::GpuExperts> experts_;  // a mixture-of-experts family's MLP, else null
  std::vector<DeviceRotary> rotary_;          // [global] or [global, local] (Gemma 3)

  std::array<DeviceMemory, kBufferCount> buffers_;
  DeviceMemory ids_, positions_, sequence_start_;  // [tokens] int32 each
  std::vector<int32_t> host_batch_;                // [3, tokens]: the three, on their way
  DeviceMemory reduce_staging_{DeviceMemory::Kind::kPinnedHost};
  DeviceMemory square_sums_;  // [tokens, 2]: OLMoE's q and k norms
  std::vector<TapSlot> taps_;
  size_t taps_in_flight_ = 0;
  gpu::StickyError error_;
  int64_t tokens_ = 0;
};

}  // namespace actex::gpu_internal

#endif  // ACTEX_GPU_CUDA_SHARD_DEVICE_INTERNAL_H_
