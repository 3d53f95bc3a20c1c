#ifndef ACTEX_ACTORS_DEVICE_PLAN_H_
#define ACTEX_ACTORS_DEVICE_PLAN_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/cuda_shard_device.h"
#include "model/precision.h"
#include "model/shard_device.h"

namespace actex {

// The most tokens one batch holds, and the flag that sets it ("--batch-tokens 8192"):
// LargestBatchOf (actors/batch_memory.h).
struct LargestBatch {
  int64_t tokens = 0;
  std::string flag;
};

// Where this host's device shards run (--device, --gpus, --precision), checked before
// any work.
struct DevicePlan {
  bool cuda = false;      // --device cuda
  std::vector<int> gpus;  // --device cuda: the GPUs this host's shards take in turn
  Precision precision = Precision::kFp32;

  // The device of this host's `shard_on_host`-th shard (0-based), with `threads` host
  // threads: the CPU's cores, or GPU gpus[shard_on_host % gpus.size()], which refuses
  // a `batch` its memory cannot hold beside the buffers of the host's shards made on
  // that GPU before it (`forward_bytes_per_token`: ForwardBytesPerToken of each of the
  // host's shards, in order; the shards are made in turn). The host's memory is
  // checked before, by CheckBatchMemory.
  ShardDeviceMaker MakerFor(int shard_on_host, int threads, const LargestBatch& batch,
                            std::span<const int64_t> forward_bytes_per_token) const;
  // What MakerFor gives CudaShardDevices under --device cuda.
  CudaOptions CudaOptionsFor(int shard_on_host, int threads, const LargestBatch& batch,
                             std::span<const int64_t> forward_bytes_per_token) const;
  // "cpu, fp32", "cpu, bf16 products by oneDNN on AMX" (or on AVX512_BF16) or "cuda
  // (GPUs 0,1), bf16", for the ready line.
  std::string Describe() const;
  // What the ready line warns of, or nothing: bf16 on a CPU where it is slower than
  // fp32 (Bf16SpeedWarning, model/kernels/cpu_isa.h).
  std::optional<std::string> Warning() const;
};

// Resolves --device (cpu | cuda), --gpus ("0,1"; empty: every GPU CUDA sees) and
// --precision (fp32 | bf16). Refuses, naming the flag and the reason: --device cuda in
// a build without CUDA or on a machine without a usable GPU, a --gpus index CUDA does
// not see or given twice, --gpus without --device cuda, and --precision bf16 on a CPU
// without AVX512_BF16 or under ACTEX_ISA=avx2 (Bf16ProductsSupported, model/kernels/cpu_isa.h).
std::expected<DevicePlan, std::string> PlanDevices(const std::string& device,
                                                   const std::string& gpus,
                                                   const std::string& precision);

}  // namespace actex

#endif  // ACTEX_ACTORS_DEVICE_PLAN_H_
