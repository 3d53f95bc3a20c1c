#ifndef ACTEX_GPU_CUDA_STATUS_H_
#define ACTEX_GPU_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <expected>
#include <string>
#include <string_view>

namespace actex::gpu {

// A CUDA runtime or cuBLAS result as an error naming `what` failed and CUDA's reason.
// `what` is a view, so that a call on the per-batch path with a literal allocates
// nothing when it succeeds.
std::expected<void, std::string> CudaOk(cudaError_t status, std::string_view what);
std::expected<void, std::string> CublasOk(cublasStatus_t status, std::string_view what);

// Keeps the first error of a sequence of asynchronous steps: steps return nothing, so a
// device records what failed and skips its later steps until the batch reports it.
class StickyError {
 public:
  bool failed() const { return !message_.empty(); }
  // Records `result`'s error if none is held yet; returns whether all is still well.
  bool Keep(const std::expected<void, std::string>& result) {
    if (!result && message_.empty()) message_ = result.error();
    return !failed();
  }
  // The held error (cleared), or success.
  std::expected<void, std::string> Take() {
    if (message_.empty()) return {};
    std::string message;
    message.swap(message_);
    return std::unexpected(message);
  }

 private:
  std::string message_;
};

}  // namespace actex::gpu

#endif  // ACTEX_GPU_CUDA_STATUS_H_
