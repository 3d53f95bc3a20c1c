// CudaShardDevice's steps that wait or copy (the batch, taps, all-reduces, ToHost) and
// the maker of GPU shards; the class, and the steps that queue one kernel each, are in
// cuda_shard_device_internal.h.

#include "gpu/cuda_shard_device.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <system_error>

#include "base/text.h"
#include "gpu/cuda_shard_device_internal.h"
#include "gpu/cuda_status.h"
#include "model/decoder_forward.h"

namespace actex {
namespace gpu_internal {

using gpu::CudaOk;

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

// Refuses a batch of `options.batch_tokens` whose forward's buffers, this shard's and
// the earlier ones' on the same GPU, cannot fit in what the weights left free of the
// current GPU's memory. A lower bound of what a batch takes (taps, product scratch and
// a mixture of experts' buffers come on top), so what passes here may still fail at
// the batch's first allocation, named then.
std::expected<void, std::string> CheckBatchFits(const ShardSetup& setup,
                                                const CudaOptions& options) {
  if (options.batch_tokens <= 0) return {};
  size_t free = 0;
  size_t total = 0;
  auto asked = CudaOk(cudaMemGetInfo(&free, &total), "asking how much of its memory is free");
  if (!asked) return asked;
  const int64_t own = ForwardBytesPerToken(setup.config, setup.slice);
  if (own <= 0) return {};
  const int64_t per_token = own + options.earlier_bytes_per_token;
  const int64_t fitting = static_cast<int64_t>(free) / per_token;
  if (options.batch_tokens <= fitting) return {};
  const std::string whose =
      options.earlier_shards == 0
          ? ""
          : ", with the " + std::to_string(options.earlier_shards) +
                " shard(s) before it on this GPU: " + BytesText(static_cast<double>(own)) +
                " a token its own";
  return std::unexpected(
      options.batch_flag + ": a batch of " + std::to_string(options.batch_tokens) +
      " tokens needs at least " +
      BytesText(static_cast<double>(options.batch_tokens) * static_cast<double>(per_token)) +
      " of its memory for the forward's buffers (" + BytesText(static_cast<double>(per_token)) +
      " a token" + whose + "), more than the " + BytesText(static_cast<double>(free)) + " of " +
      BytesText(static_cast<double>(total)) + " left free beside the weights: give at most " +
      std::to_string(fitting) + " tokens");
}

}  // namespace gpu_internal

bool CudaBuilt() { return true; }

std::expected<int, std::string> UsableGpuCount() {
  int count = 0;
  auto counted = gpu::CudaOk(cudaGetDeviceCount(&count), "no usable GPU: cudaGetDeviceCount");
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
    if (auto fits = gpu_internal::CheckBatchFits(setup, options); !fits) {
      return std::unexpected("GPU " + std::to_string(options.gpu) + ": " + fits.error());
    }
    try {
      return std::make_unique<gpu_internal::CudaShardDevice>(setup, options, std::move(*streams),
                                                             std::move(*weights));
    } catch (const std::system_error& e) {  // the host threads (ThreadTeam)
      return std::unexpected("a GPU shard of " + std::to_string(options.host_threads) +
                             " host threads (--blas-threads): " + e.what());
    }
  };
}

}  // namespace actex
