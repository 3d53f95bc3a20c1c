#ifndef ACTEX_GPU_CUDA_SHARD_DEVICE_H_
#define ACTEX_GPU_CUDA_SHARD_DEVICE_H_

#include <cstdint>
#include <expected>
#include <string>

#include "model/precision.h"
#include "model/shard_device.h"

namespace actex {

// Where a shard runs on a GPU.
struct CudaOptions {
  int gpu = 0;  // the CUDA device index, as CUDA_VISIBLE_DEVICES leaves them
  Precision precision = Precision::kFp32;
  int host_threads = 1;  // the shard's team on the host (SAE encoding), >= 1
  // The most tokens one batch holds, and the flag that sets it ("--batch-tokens
  // 8192"): once the weights are up, the forward's buffers of such a batch must fit in
  // the GPU's free memory. 0: not checked (the first batch finds out).
  int64_t batch_tokens = 0;
  std::string batch_flag = {};
  // The host's shards made on this GPU before this one, and their forward buffers'
  // bytes a token together: such a batch's buffers of theirs come on top.
  int earlier_shards = 0;
  int64_t earlier_bytes_per_token = 0;
};

// Shards that run on GPU `options.gpu` (gpu/README.md): the weights uploaded once,
// products by cuBLAS (fp32: float32 math with TF32 off; bf16: bfloat16 inputs, float32
// accumulation), everything else by the kernels of gpu/kernels in float32, the batch's
// activations on the GPU, taps copied to pinned host memory on a stream of their own.
// The maker refuses, before any work, a build without CUDA, a machine without a usable
// GPU, an index past the GPUs there are, a head_dim the attention kernel does not
// take (odd, or over 256), and a batch of `batch_tokens` whose buffers (its own and
// the earlier shards') cannot fit in what the weights left of the GPU's memory, each
// naming why.
ShardDeviceMaker CudaShardDevices(const CudaOptions& options);

// Whether this actex was built with the CUDA device (CMake found a CUDA toolkit).
bool CudaBuilt();

// How many GPUs this process can use, or why it can use none (built without CUDA, no
// driver, no device).
std::expected<int, std::string> UsableGpuCount();

}  // namespace actex

#endif  // ACTEX_GPU_CUDA_SHARD_DEVICE_H_
