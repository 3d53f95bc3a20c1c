// The CUDA emulator's cuBLAS (cublas_v2.h) over OpenBLAS's cblas_sgemm.

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/kernels/half_float.h"
#include "tests/cuda_emulator/cublas_v2.h"
#include "tests/cuda_emulator/status_text.h"

namespace {

constexpr int kVersion = 130000;  // the cuBLAS of CUDA 13, which gpu/ is built with

// Each status the emulator returns, named and described as cuBLAS does.
constexpr actex::cuda_emulator::StatusText<cublasStatus_t> kStatusTexts[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an unsupported value or parameter was passed to the function"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
     "the functionality requested is not supported (by the CUDA emulator)"},
};

actex::cuda_emulator::StatusText<cublasStatus_t> TextOfStatus(cublasStatus_t status) {
  return actex::cuda_emulator::TextOf(status, kStatusTexts,
                                      {status, "CUBLAS_STATUS_UNKNOWN", "unknown status"});
}

// The float32 values of the `count` elements at `data` of `type`, widened into `scratch`
// where they are 16-bit.
const float* AsFloats(const void* data, cudaDataType type, size_t count,
                      std::vector<float>& scratch) {
  if (type == CUDA_R_32F) return static_cast<const float*>(data);
  const auto* bits = static_cast<const uint16_t*>(data);
  scratch.resize(count);
  for (size_t i = 0; i < count; ++i) scratch[i] = actex::Bfloat16BitsToFloat(bits[i]);
  return scratch.data();
}

cublasStatus_t Gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, float alpha, const void* a, cudaDataType type, int lda,
                    const void* b, int ldb, float beta, float* c, int ldc) {
  if (handle->math != CUBLAS_DEFAULT_MATH) return CUBLAS_STATUS_NOT_SUPPORTED;
  // op(A) is [m, k] and op(B) [k, n], column-major: A stores k columns (m when
  // transposed) of lda values, B n columns (k) of ldb.
  const bool a_transposed = transa == CUBLAS_OP_T, b_transposed = transb == CUBLAS_OP_T;
  if (m < 0 || n < 0 || k < 0 || lda < std::max(1, a_transposed ? k : m) ||
      ldb < std::max(1, b_transposed ? n : k) || ldc < std::max(1, m)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  std::vector<float> a_scratch, b_scratch;
  const float* a_values = AsFloats(a, type, size_t(lda) * (a_transposed ? m : k), a_scratch);
  const float* b_values = AsFloats(b, type, size_t(ldb) * (b_transposed ? k : n), b_scratch);
  cblas_sgemm(CblasColMajor, a_transposed ? CblasTrans : CblasNoTrans,
              b_transposed ? CblasTrans : CblasNoTrans, m, n, k, alpha, a_values, lda, b_values,
              ldb, beta, c, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = new EmulatedCublas;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion(cublasHandle_t /*handle*/, int* version) {
  *version = kVersion;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) { return TextOfStatus(status).name; }

const char* cublasGetStatusString(cublasStatus_t status) {
  return TextOfStatus(status).description;
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* a, int lda, const float* b, int ldb, const float* beta,
                           float* c, int ldc) {
  return Gemm(handle, transa, transb, m, n, k, *alpha, a, CUDA_R_32F, lda, b, ldb, *beta, c, ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* a, cudaDataType atype, int lda, const void* b,
                            cudaDataType btype, int ldb, const void* beta, void* c,
                            cudaDataType ctype, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t /*algo*/) {
  if (atype != btype || (atype != CUDA_R_32F && atype != CUDA_R_16BF) || ctype != CUDA_R_32F ||
      compute != CUBLAS_COMPUTE_32F) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return Gemm(handle, transa, transb, m, n, k, *static_cast<const float*>(alpha), a, atype, lda, b,
              ldb, *static_cast<const float*>(beta), static_cast<float*>(c), ldc);
}
