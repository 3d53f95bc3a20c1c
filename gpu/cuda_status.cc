#include "gpu/cuda_status.h"

namespace actex::gpu {

std::expected<void, std::string> CudaOk(cudaError_t status, std::string_view what) {
  if (status == cudaSuccess) return {};
  return std::unexpected(std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                         cudaGetErrorString(status) + ")");
}

std::expected<void, std::string> CublasOk(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return {};
  return std::unexpected(std::string(what) + ": " + cublasGetStatusName(status) + " (" +
                         cublasGetStatusString(status) + ")");
}

}  // namespace actex::gpu
