#include "gpu/device_weights.h"

#include <algorithm>

#include "gpu/cuda_status.h"
#include "gpu/kernels/elementwise.h"
#include "model/kernels/half_float.h"

namespace actex::gpu {
namespace {

StoredDtype StoredDtypeOf(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::kF16:
      return StoredDtype::kF16;
    case WeightDtype::kBF16:
      return StoredDtype::kBF16;
    default:
      return StoredDtype::kF32;
  }
}

}  // namespace

std::expected<DeviceWeights, std::string> DeviceWeights::Upload(const ShardWeights& weights,
                                                                int last_layer, Precision precision,
                                                                cudaStream_t stream) {
  DeviceWeights result;
  auto embed = result.AddTable(weights.embed, stream);
  if (!embed) return std::unexpected(embed.error());
  result.embed_ = *embed;
  if (weights.position_embed.data != nullptr) {
    auto position_embed = result.AddTable(weights.position_embed, stream);
    if (!position_embed) return std::unexpected(position_embed.error());
    result.position_embed_ = *position_embed;
  }
  for (int layer = 0; layer <= last_layer; ++layer) {
    std::expected<void, std::string> status;
    const LayerShardWeights& tensors = weights.layers[layer];
    ForEachTensor(
        tensors,
        [&](const WeightSlice& matrix) {
          // A router stays as stored: its product is float32 (gpu/gpu_experts.h).
          const Precision kept = &matrix == &tensors.router ? Precision::kFp32 : precision;
          if (status) status = result.AddMatrix(matrix, kept, stream);
        },
        [&](const std::vector<float>& vector) {
          if (status) status = result.AddVector(vector, stream);
        });
    if (!status) {
      return std::unexpected("uploading layer " + std::to_string(layer) + ": " + status.error());
    }
  }
  for (const std::vector<float>* vector : {&weights.final_norm, &weights.final_norm_bias}) {
    auto added = result.AddVector(*vector, stream);
    if (!added) return std::unexpected(added.error());
  }
  auto done = CudaOk(cudaStreamSynchronize(stream), "uploading the weights");
  if (!done) return std::unexpected(done.error());
  result.staging_ = DeviceMemory();
  return result;
}

const DeviceTensor& DeviceWeights::Matrix(const WeightSlice& weight) const {
  return tensors_.at(&weight);
}

const float* DeviceWeights::Vector(const std::vector<float>& vector) const {
  if (vector.empty()) return nullptr;
  return static_cast<const float*>(tensors_.at(&vector).data);
}

std::expected<void, std::string> DeviceWeights::AddMatrix(const WeightSlice& weight,
                                                          Precision precision,
                                                          cudaStream_t stream) {
  if (weight.weight.data == nullptr) return {};
  const int64_t out = weight.out_features(), in = weight.in_features();
  const StoredDtype file_dtype = StoredDtypeOf(weight.weight.dtype);
  const size_t file_bytes = static_cast<size_t>(WeightDtypeBytes(weight.weight.dtype));
  const bool round = precision == Precision::kBf16 && file_dtype != StoredDtype::kBF16;
  const StoredDtype stored = precision == Precision::kBf16 ? StoredDtype::kBF16 : file_dtype;
  const size_t stored_bytes = stored == StoredDtype::kF32 ? 4 : 2;
  DeviceMemory& memory = memory_.emplace_back();
  const std::string what = std::to_string(out) + "x" + std::to_string(in) + " matrix";
  auto reserved = memory.Reserve(static_cast<size_t>(out * in) * stored_bytes);
  if (!reserved) return std::unexpected(what + ": " + reserved.error());
  // The slice's rows [first_row, end_row) and columns [first_col, end_col) of the
  // stored [rows, cols] tensor, packed to [out, in]: straight into place, or through
  // float32 staging to be rounded to bfloat16.
  void* target = memory.data();
  if (round) {
    auto staged = staging_.Reserve(static_cast<size_t>(out * in) * (4 + file_bytes));
    if (!staged) return std::unexpected(what + ": " + staged.error());
    target = staging_.as<uint8_t>() + out * in * 4;
  }
  const auto* source = static_cast<const uint8_t*>(weight.weight.data) +
                       (weight.first_row * weight.weight.cols + weight.first_col) * file_bytes;
  auto copied =
      CudaOk(cudaMemcpy2DAsync(target, in * file_bytes, source, weight.weight.cols * file_bytes,
                               in * file_bytes, out, cudaMemcpyHostToDevice, stream),
             "copying a " + what + " to the GPU");
  if (!copied) return copied;
  if (round) {
    auto widened = CudaOk(WidenToFloat(target, file_dtype, out * in, staging_.as<float>(), stream),
                          "launching WidenToFloat");
    if (!widened) return widened;
    auto launched =
        CudaOk(RoundToBFloat16(staging_.as<float>(), out * in, memory.as<uint16_t>(), stream),
               "launching RoundToBFloat16");
    if (!launched) return launched;
    // The staging is reused by the next matrix: wait for this one.
    auto rounded = CudaOk(cudaStreamSynchronize(stream), "rounding a " + what + " to bfloat16");
    if (!rounded) return rounded;
  }
  tensors_[&weight] = {.data = memory.data(), .dtype = stored, .rows = out, .cols = in};
  if (precision == Precision::kFp32 && stored != StoredDtype::kF32) {
    largest_widened_ = std::max(largest_widened_, out * in);
  }
  bytes_ += static_cast<int64_t>(memory.bytes());
  return {};
}

std::expected<void, std::string> DeviceWeights::AddVector(const std::vector<float>& vector,
                                                          cudaStream_t stream) {
  if (vector.empty()) return {};
  DeviceMemory& memory = memory_.emplace_back();
  const size_t bytes = vector.size() * sizeof(float);
  auto reserved = memory.Reserve(bytes);
  if (!reserved) return reserved;
  auto copied =
      CudaOk(cudaMemcpyAsync(memory.data(), vector.data(), bytes, cudaMemcpyHostToDevice, stream),
             "copying a vector to the GPU");
  if (!copied) return copied;
  tensors_[&vector] = {.data = memory.data(),
                       .dtype = StoredDtype::kF32,
                       .rows = 1,
                       .cols = static_cast<int64_t>(vector.size())};
  bytes_ += static_cast<int64_t>(bytes);
  return {};
}

std::expected<DeviceTensor, std::string> DeviceWeights::AddTable(const WeightView& table,
                                                                 cudaStream_t stream) {
  DeviceMemory& memory = memory_.emplace_back();
  const size_t bytes = static_cast<size_t>(table.rows * table.cols * WeightDtypeBytes(table.dtype));
  auto reserved = memory.Reserve(bytes);
  if (!reserved) return std::unexpected("the embedding table: " + reserved.error());
  auto copied =
      CudaOk(cudaMemcpyAsync(memory.data(), table.data, bytes, cudaMemcpyHostToDevice, stream),
             "copying the embedding table to the GPU");
  if (!copied) return std::unexpected(copied.error());
  bytes_ += static_cast<int64_t>(bytes);
  return DeviceTensor{.data = memory.data(),
                      .dtype = StoredDtypeOf(table.dtype),
                      .rows = table.rows,
                      .cols = table.cols};
}

}  // namespace actex::gpu
