#include "gpu/shard_streams.h"

#include <utility>

#include "gpu/cuda_status.h"
#include "gpu/kernels/elementwise.h"

namespace actex::gpu {

std::expected<ShardStreams, std::string> ShardStreams::Open(int gpu) {
  ShardStreams streams;
  streams.gpu_ = gpu;
  const std::string where = "GPU " + std::to_string(gpu) + ": ";
  auto current = streams.MakeCurrent();
  if (!current) return std::unexpected(current.error());
  for (cudaStream_t* stream : {&streams.compute_, &streams.copy_}) {
    auto made = CudaOk(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking),
                       where + "creating a stream");
    if (!made) return std::unexpected(made.error());
  }
  auto event = CudaOk(cudaEventCreateWithFlags(&streams.copy_ready_, cudaEventDisableTiming),
                      where + "creating an event");
  if (!event) return std::unexpected(event.error());
  auto handle = CublasOk(cublasCreate(&streams.cublas_), where + "creating a cuBLAS handle");
  if (!handle) return std::unexpected(handle.error());
  // Float32 products stay float32: no TF32 (CUBLAS_DEFAULT_MATH never uses it).
  auto mode = CublasOk(cublasSetMathMode(streams.cublas_, CUBLAS_DEFAULT_MATH),
                       where + "setting cuBLAS's math mode");
  if (!mode) return std::unexpected(mode.error());
  auto bound = CublasOk(cublasSetStream(streams.cublas_, streams.compute_),
                        where + "binding cuBLAS to the stream");
  if (!bound) return std::unexpected(bound.error());
  return streams;
}

ShardStreams::ShardStreams(ShardStreams&& other) noexcept
    : gpu_(other.gpu_),
      compute_(std::exchange(other.compute_, nullptr)),
      copy_(std::exchange(other.copy_, nullptr)),
      copy_ready_(std::exchange(other.copy_ready_, nullptr)),
      cublas_(std::exchange(other.cublas_, nullptr)),
      narrow_inputs_(std::move(other.narrow_inputs_)),
      wide_weight_(std::move(other.wide_weight_)) {}

ShardStreams::~ShardStreams() {
  if (gpu_ < 0) return;
  (void)cudaSetDevice(gpu_);
  // Failures here can only repeat an error the forward already reported.
  if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
  if (copy_ready_ != nullptr) (void)cudaEventDestroy(copy_ready_);
  for (cudaStream_t stream : {compute_, copy_}) {
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  }
}

std::string ShardStreams::Describe(Precision precision) const {
  cudaDeviceProp properties{};
  const bool known = cudaGetDeviceProperties(&properties, gpu_) == cudaSuccess;
  int version = 0;
  (void)cublasGetVersion(cublas_, &version);
  const std::string library =
      "cuBLAS " + std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100);
  const std::string products = precision == Precision::kBf16
                                   ? "bf16 products, fp32 accumulation, by " + library
                                   : "fp32 products by " + library + " (TF32 off)";
  return "cuda:" + std::to_string(gpu_) + " " + (known ? properties.name : "(unnamed GPU)") + ", " +
         products;
}

std::expected<void, std::string> ShardStreams::MakeCurrent() const {
  return CudaOk(cudaSetDevice(gpu_), "selecting GPU " + std::to_string(gpu_));
}

std::expected<void, std::string> ShardStreams::ReserveProductScratch(int64_t activation_values,
                                                                     int64_t widened_values,
                                                                     Precision precision) {
  if (precision == Precision::kBf16) {
    auto narrow = narrow_inputs_.Reserve(static_cast<size_t>(activation_values) * sizeof(uint16_t));
    if (!narrow) return narrow;
  }
  if (widened_values == 0) return {};
  return wide_weight_.Reserve(static_cast<size_t>(widened_values) * sizeof(float));
}

bool ShardStreams::RoundsInput(const DeviceTensor& weight, Precision precision) {
  return precision == Precision::kBf16 && weight.dtype == StoredDtype::kBF16;
}

std::expected<void, std::string> ShardStreams::Product(const float* x, int64_t tokens,
                                                       const DeviceTensor& weight, float* y,
                                                       Precision precision, bool input_rounded) {
  const int out = static_cast<int>(weight.rows), in = static_cast<int>(weight.cols);
  const int rows = static_cast<int>(tokens);
  const float one = 1.0f, zero = 0.0f;
  // Row-major y = x·Wᵀ is column-major yᵀ = W·xᵀ, W being [in, out] column-major: op T.
  // A matrix kept as stored (a router) is multiplied in float32 whatever `precision`.
  // The product's result; described (the shape written out) only when it failed.
  auto checked = [&](cublasStatus_t status, const char* kind) {
    if (status == CUBLAS_STATUS_SUCCESS) return std::expected<void, std::string>();
    return CublasOk(status, std::string(kind) + " product of " + std::to_string(out) + "x" +
                                std::to_string(in));
  };
  if (RoundsInput(weight, precision)) {
    if (!input_rounded) {
      auto rounded =
          CudaOk(RoundToBFloat16(x, tokens * in, narrow_inputs_.as<uint16_t>(), compute_),
                 "launching RoundToBFloat16");
      if (!rounded) return rounded;
    }
    return checked(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &one, weight.data,
                                CUDA_R_16BF, in, narrow_inputs_.data(), CUDA_R_16BF, in, &zero, y,
                                CUDA_R_32F, out, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "a bf16");
  }
  const float* w = static_cast<const float*>(weight.data);
  if (weight.dtype != StoredDtype::kF32) {
    auto widened = CudaOk(WidenToFloat(weight.data, weight.dtype, weight.rows * weight.cols,
                                       wide_weight_.as<float>(), compute_),
                          "launching WidenToFloat");
    if (!widened) return widened;
    w = wide_weight_.as<float>();
  }
  return checked(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &one, w, in, x, in,
                             &zero, y, out),
                 "an fp32");
}

std::expected<void, std::string> ShardStreams::CopyHome(const void* source, void* on_gpu,
                                                        void* home, size_t bytes) {
  auto copied = CudaOk(cudaMemcpyAsync(on_gpu, source, bytes, cudaMemcpyDeviceToDevice, compute_),
                       "copying a tap on the GPU");
  if (!copied) return copied;
  auto recorded = CudaOk(cudaEventRecord(copy_ready_, compute_), "recording a tap");
  if (!recorded) return recorded;
  auto waited = CudaOk(cudaStreamWaitEvent(copy_, copy_ready_, 0), "ordering a tap's copy");
  if (!waited) return waited;
  return CudaOk(cudaMemcpyAsync(home, on_gpu, bytes, cudaMemcpyDeviceToHost, copy_),
                "copying a tap to the host");
}

std::expected<void, std::string> ShardStreams::ToHostNow(const void* source, void* home,
                                                         size_t bytes) {
  auto copied = CudaOk(cudaMemcpyAsync(home, source, bytes, cudaMemcpyDeviceToHost, compute_),
                       "copying activations to the host");
  if (!copied) return copied;
  return CudaOk(cudaStreamSynchronize(compute_),
                "running the forward on GPU " + std::to_string(gpu_));
}

std::expected<void, std::string> ShardStreams::Finish() {
  const std::string what = "running the forward on GPU " + std::to_string(gpu_);
  auto computed = CudaOk(cudaStreamSynchronize(compute_), what);
  if (!computed) return computed;
  auto copied = CudaOk(cudaStreamSynchronize(copy_), what + " (copying taps home)");
  if (!copied) return copied;
  return CudaOk(cudaGetLastError(), what);
}

}  // namespace actex::gpu
