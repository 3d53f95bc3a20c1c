// A shard's forward on a GPU (gpu/cuda_shard_device.h). Every step is queued on the
// shard's compute stream; taps are copied on a second stream; the host waits only at an
// all-reduce across shards, at ToHost, and at EndBatch. Steps return nothing, so the
// first CUDA error is kept (StickyError), later steps are skipped, and EndBatch reports
// it. Shapes: `tokens` is the packed batch length, `hidden` the model's width.

#include "gpu/cuda_shard_device.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstring>

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

namespace actex {
namespace {

using gpu::CudaOk;
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
    error_.Keep(memory.Reserve(static_cast<size_t>(floats) * sizeof(float)));
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

std::expected<void, std::string> CudaShardDevice::BeginBatch(const PackedBatch& batch,
                                                             int32_t max_position) {
  auto current = streams_.MakeCurrent();
  if (!current) return current;
  // EndBatch reads the thread's last CUDA error as its batch's launch error: drop one a
  // failed BeginBatch (not followed by EndBatch) left, which was reported then.
  (void)cudaGetLastError();
  tokens_ = static_cast<int64_t>(batch.token_ids.size());
  const size_t tokens = batch.token_ids.size();
  host_batch_.resize(3 * tokens);
  std::copy(batch.token_ids.begin(), batch.token_ids.end(), host_batch_.begin());
  std::copy(batch.positions.begin(), batch.positions.end(), host_batch_.begin() + tokens);
  int32_t* starts = host_batch_.data() + 2 * tokens;  // each token's sequence's first token
  for (int32_t first = 0; int32_t length : batch.sequence_lengths) {
    std::fill(starts + first, starts + first + length, first);
    first += length;
  }
  int index = 0;
  for (DeviceMemory* memory : {&ids_, &positions_, &sequence_start_}) {
    auto reserved = memory->Reserve(tokens * sizeof(int32_t));
    if (!reserved) return reserved;
    auto copied =
        CudaOk(cudaMemcpyAsync(memory->data(), host_batch_.data() + index++ * tokens,
                               tokens * sizeof(int32_t), cudaMemcpyHostToDevice, stream()),
               "copying the batch to the GPU");
    if (!copied) return copied;
  }
  auto rotary = UploadRotary(max_position);
  if (!rotary) return rotary;
  return streams_.ReserveProductScratch(tokens_ * widest_input_, weights_.largest_widened(),
                                        options_.precision);
}

std::expected<void, std::string> CudaShardDevice::UploadRotary(int32_t max_position) {
  const int64_t half = config_.head_dim / 2;
  for (DeviceRotary& rotary : rotary_) {
    rotary.table.Reserve(int64_t{max_position} + 1);
    const int64_t positions = rotary.table.size();
    if (positions <= rotary.uploaded) continue;
    const size_t bytes = static_cast<size_t>(positions * half) * sizeof(float);
    for (auto [memory, values] : {std::pair{&rotary.cos, rotary.table.cos(0)},
                                  std::pair{&rotary.sin, rotary.table.sin(0)}}) {
      auto reserved = memory->Reserve(bytes);
      if (!reserved) return reserved;
      // On the compute stream, which Rotate's kernels wait for: a cudaMemcpy would go on
      // the legacy stream, which the non-blocking compute stream does not wait for, and
      // from pageable memory it may return before the table has landed.
      auto copied =
          CudaOk(cudaMemcpyAsync(memory->data(), values, bytes, cudaMemcpyHostToDevice, stream()),
                 "copying the rotary table to the GPU");
      if (!copied) return copied;
    }
    rotary.uploaded = positions;
  }
  return {};
}

std::expected<void, std::string> CudaShardDevice::EndBatch() {
  error_.Keep(streams_.Finish());
  if (!error_.failed()) {
    for (size_t i = 0; i < taps_in_flight_; ++i) {
      std::memcpy(taps_[i].target, taps_[i].pinned.data(),
                  static_cast<size_t>(taps_[i].count) * sizeof(float));
    }
  }
  taps_in_flight_ = 0;
  return error_.Take();
}

void CudaShardDevice::Tap(const float* data, int64_t count, float* host_target) {
  if (error_.failed()) return;
  if (taps_in_flight_ == taps_.size()) taps_.emplace_back();
  TapSlot& slot = taps_[taps_in_flight_++];
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  if (!error_.Keep(slot.on_gpu.Reserve(bytes)) || !error_.Keep(slot.pinned.Reserve(bytes))) return;
  slot.target = host_target;
  slot.count = count;
  // A copy on the GPU lets the forward go on at once; the copy stream takes it home.
  error_.Keep(streams_.CopyHome(data, slot.on_gpu.data(), slot.pinned.data(), bytes));
}

std::expected<void, std::string> CudaShardDevice::AllReduceSum(float* data, int64_t count,
                                                               Collective& collective) {
  if (collective.size() == 1) return {};
  auto held = error_.Take();
  if (!held) return held;
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  if (bytes > reduce_staging_.bytes()) {
    // The last all-reduce's copy up (queued, not waited for) may still read the staging
    // that growing it frees: OLMoE's q/k sums (2·tokens) come before the first
    // [tokens, hidden] sum of a batch.
    auto idle = streams_.Finish();
    if (!idle) return idle;
  }
  auto reserved = reduce_staging_.Reserve(bytes);
  if (!reserved) return reserved;
  auto home = streams_.ToHostNow(data, reduce_staging_.data(), bytes);
  if (!home) return home;
  auto reduced = collective.AllReduceSum({reduce_staging_.as<float>(), static_cast<size_t>(count)});
  if (!reduced) return reduced;
  return CudaOk(
      cudaMemcpyAsync(data, reduce_staging_.data(), bytes, cudaMemcpyHostToDevice, stream()),
      "copying an all-reduced sum to the GPU");
}

std::expected<void, std::string> CudaShardDevice::NormalizeWholeProjections(
    int layer, const LayerShardWeights& w, float* queries, float* keys, Collective& collective) {
  // A held error may be a buffer that was never allocated: no kernel on it.
  if (error_.failed()) return error_.Take();
  const int64_t dim = config_.head_dim;
  const int64_t q_width = int64_t{shape_.heads} * dim, kv_width = int64_t{shape_.kv_heads} * dim;
  const KeyColumns counted = CountedKeyColumns(config_, slice_);
  if (!error_.Keep(square_sums_.Reserve(static_cast<size_t>(2 * tokens_) * sizeof(float)))) {
    return error_.Take();
  }
  float* sums = square_sums_.as<float>();  // [tokens, 2]
  Launched(gpu::SumSquaresOfRows(queries, q_width, keys, kv_width, counted.first, counted.end,
                                 tokens_, sums, stream()),
           "launching SumSquaresOfRows");
  auto reduced = AllReduceSum(sums, 2 * tokens_, collective);
  if (!reduced) {
    return std::unexpected("all-reduce of q_norm/k_norm of layer " + std::to_string(layer) + ": " +
                           reduced.error());
  }
  const float eps = config_.rms_norm_eps;
  Launched(gpu::ScaleRowsByRms(queries, q_width, sums, 0, static_cast<float>(config_.heads * dim),
                               eps, weights_.Vector(w.q_norm), tokens_, stream()),
           "launching ScaleRowsByRms");
  Launched(gpu::ScaleRowsByRms(keys, kv_width, sums, 1, static_cast<float>(config_.kv_heads * dim),
                               eps, weights_.Vector(w.k_norm), tokens_, stream()),
           "launching ScaleRowsByRms");
  return {};
}

std::span<const float> CudaShardDevice::ToHost(const float* data, int64_t count,
                                               std::vector<float>* staging) {
  staging->resize(static_cast<size_t>(count));
  if (!error_.failed()) {
    error_.Keep(streams_.ToHostNow(data, staging->data(), staging->size() * sizeof(float)));
  }
  return *staging;
}

}  // namespace

bool CudaBuilt() { return true; }

std::expected<int, std::string> UsableGpuCount() {
  int count = 0;
  auto counted = CudaOk(cudaGetDeviceCount(&count), "no usable GPU: cudaGetDeviceCount");
  if (!counted) return std::unexpected(counted.error());
  if (count == 0) return std::unexpected("no usable GPU: CUDA sees no device");
  return count;
}

ShardDeviceMaker CudaShardDevices(const CudaOptions& options) {
  return [options](
             const ShardSetup& setup) -> std::expected<std::unique_ptr<ShardDevice>, std::string> {
    if (options.host_threads < 1) {
      return std::unexpected("a shard needs at least one host thread, not " +
                             std::to_string(options.host_threads));
    }
    const ModelConfig& config = setup.config;
    if (config.head_dim > gpu::kMaxHeadDim || config.head_dim % 2 != 0) {
      return std::unexpected(config.name + "'s head_dim " + std::to_string(config.head_dim) +
                             " is not an even number up to " + std::to_string(gpu::kMaxHeadDim) +
                             ", which the GPU attention needs");
    }
    auto count = UsableGpuCount();
    if (!count) return std::unexpected(count.error());
    if (options.gpu < 0 || options.gpu >= *count) {
      return std::unexpected("GPU " + std::to_string(options.gpu) +
                             " was asked for, but CUDA sees " + std::to_string(*count) +
                             " (indices 0.." + std::to_string(*count - 1) + ")");
    }
    auto streams = gpu::ShardStreams::Open(options.gpu);
    if (!streams) return std::unexpected(streams.error());
    auto weights = gpu::DeviceWeights::Upload(setup.weights, setup.last_layer, options.precision,
                                              streams->compute());
    if (!weights) {
      return std::unexpected("GPU " + std::to_string(options.gpu) + ": " + weights.error());
    }
    return std::make_unique<CudaShardDevice>(setup, options, std::move(*streams),
                                             std::move(*weights));
  };
}

}  // namespace actex
