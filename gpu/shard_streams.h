#ifndef ACTEX_GPU_SHARD_STREAMS_H_
#define ACTEX_GPU_SHARD_STREAMS_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>

#include "gpu/device_memory.h"
#include "gpu/device_weights.h"
#include "model/precision.h"

namespace actex::gpu {

// What one shard holds of its GPU besides memory: the device index, a compute stream
// (every step of the forward), a copy stream (taps on their way home), the cuBLAS handle
// bound to the compute stream, and the products' scratch. Movable, not copyable.
class ShardStreams {
 public:
  // Opens GPU `gpu` for one shard; fails naming the GPU and CUDA's reason.
  static std::expected<ShardStreams, std::string> Open(int gpu);
  ShardStreams(ShardStreams&& other) noexcept;
  ShardStreams& operator=(ShardStreams&&) = delete;
  ShardStreams(const ShardStreams&) = delete;
  ~ShardStreams();

  // "cuda:0 NVIDIA H100 80GB HBM3, fp32 products by cuBLAS 13.0 (TF32 off)".
  std::string Describe(Precision precision) const;
  // Makes this GPU current for the calling thread (CUDA's current device is per thread).
  std::expected<void, std::string> MakeCurrent() const;
  cudaStream_t compute() const { return compute_; }

  // Scratch for products of up to `activation_values` input values (their bf16
  // rounding, for bf16 products) and float32 products of 16-bit matrices of up to
  // `widened_values` (their widening; 0: none).
  std::expected<void, std::string> ReserveProductScratch(int64_t activation_values,
                                                         int64_t widened_values,
                                                         Precision precision);
  // Whether Product of `weight` at `precision` multiplies x rounded to bfloat16 (into
  // the product scratch) rather than x itself.
  static bool RoundsInput(const DeviceTensor& weight, Precision precision);
  // y[tokens, out] = x[tokens, in] · weightᵀ, queued on the compute stream: float32
  // (16-bit weights widened first; TF32 off) or bfloat16 inputs with float32 accumulation.
  // `input_rounded`: the scratch still holds this x rounded by an earlier Product (of
  // the same step, RoundsInput true), which is reused instead of rounding x again.
  std::expected<void, std::string> Product(const float* x, int64_t tokens,
                                           const DeviceTensor& weight, float* y,
                                           Precision precision, bool input_rounded = false);
  // Copies `bytes` of `source` into `on_gpu` on the compute stream, then from there into
  // pinned `home` on the copy stream: the compute stream goes on at once.
  std::expected<void, std::string> CopyHome(const void* source, void* on_gpu, void* home,
                                            size_t bytes);
  // Copies `bytes` of `source` into host memory `home` once the compute stream reaches
  // this point, and waits for it.
  std::expected<void, std::string> ToHostNow(const void* source, void* home, size_t bytes);
  // Waits for both streams; reports any error a kernel met.
  std::expected<void, std::string> Finish();

 private:
  ShardStreams() = default;

  int gpu_ = -1;
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  cudaEvent_t copy_ready_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  DeviceMemory narrow_inputs_;  // [tokens, in] bfloat16 (bf16 products)
  DeviceMemory wide_weight_;    // [out, in] float32 (fp32 products of 16-bit weights)
};

}  // namespace actex::gpu

#endif  // ACTEX_GPU_SHARD_STREAMS_H_
