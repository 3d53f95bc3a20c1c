#include "gpu/cuda_status.h"

namespace actex::gpu {

std::expected<void, std::string> CudaOk(cudaError_t status, const std::string& what) {
  if (status == cudaSuccess) return {};
  return std::unexpected(what + ": " + cudaGetErrorName(status) + " (" +
                         cudaGetErrorString(status) + ")");
}

std::expected<void, std::string> CublasOk(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return {};
  return std::unexpected(what + ": " + cublasGetStatusName(status) + " (" +
                         cublasGetStatusString(status) + ")");
}

}  // namespace actex::gpu
