#ifndef ACTEX_GPU_DEVICE_WEIGHTS_H_
#define ACTEX_GPU_DEVICE_WEIGHTS_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <expected>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/device_memory.h"
#include "gpu/kernels/launch.h"
#include "model/precision.h"
#include "model/shard_weights.h"

namespace actex::gpu {

// One weight on the GPU, contiguous and row-major.
struct DeviceTensor {
  const void* data = nullptr;
  StoredDtype dtype = StoredDtype::kF32;
  int64_t rows = 0, cols = 0;  // [rows, cols]; matrices [out, in] as WeightSlice
};

// A shard's weights on its GPU, uploaded once: every tensor of the ShardWeights it was
// made from, found by the address of the host member that holds it (the contract of
// model/shard_device.h). Matrices are the shard's slices, stored as in their files
// (16-bit stays 16-bit) for fp32 products, or rounded to bfloat16 once for bf16 ones;
// small vectors are float32; the embedding tables are stored as in their files.
class DeviceWeights {
 public:
  // Uploads layers [0, last_layer] of `weights`, which must outlive the result (its
  // addresses are the keys). Fails, naming the tensor and size, when the GPU lacks the
  // memory.
  static std::expected<DeviceWeights, std::string> Upload(const ShardWeights& weights,
                                                          int last_layer, Precision precision,
                                                          cudaStream_t stream);

  // The copy of `weight` (a member of the uploaded ShardWeights).
  const DeviceTensor& Matrix(const WeightSlice& weight) const;
  // The copy of `vector`, or null when it is empty.
  const float* Vector(const std::vector<float>& vector) const;
  const DeviceTensor& embed() const { return embed_; }
  const DeviceTensor& position_embed() const { return position_embed_; }  // data null: none
  // The largest 16-bit matrix that float32 products read, in values (the size of their
  // widening scratch; 0 when none).
  int64_t largest_widened() const { return largest_widened_; }
  int64_t bytes() const { return bytes_; }

 private:
  std::expected<void, std::string> AddMatrix(const WeightSlice& weight, Precision precision,
                                             cudaStream_t stream);
  // Every copy goes on `stream` (the shard's non-blocking compute stream): a plain
  // cudaMemcpy from pageable memory may return before its DMA lands, and it runs on the
  // legacy stream, which the compute stream does not wait for, so the forward's first
  // kernels could read a vector or table still on its way.
  std::expected<void, std::string> AddVector(const std::vector<float>& vector, cudaStream_t stream);
  std::expected<DeviceTensor, std::string> AddTable(const WeightView& table, cudaStream_t stream);

  std::vector<DeviceMemory> memory_;
  std::unordered_map<const void*, DeviceTensor> tensors_;
  DeviceTensor embed_, position_embed_;
  DeviceMemory staging_;  // a matrix on its way to bfloat16: [out, in] float32
  int64_t largest_widened_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace actex::gpu

#endif  // ACTEX_GPU_DEVICE_WEIGHTS_H_
