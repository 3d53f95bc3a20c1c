#ifndef ACTEX_TESTS_CUDA_EMULATOR_CUBLAS_V2_H_
#define ACTEX_TESTS_CUDA_EMULATOR_CUBLAS_V2_H_

// The CUDA emulator's cuBLAS: the calls gpu/ makes, with cuBLAS's signatures and enum
// values, the products computed at once by OpenBLAS in float32 (16-bit inputs widened
// exactly first: what the tensor cores multiply, accumulated in float32).

#include "tests/cuda_emulator/cuda_runtime.h"

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum cublasMath_t { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3 };
enum cudaDataType { CUDA_R_32F = 0, CUDA_R_16BF = 14 };
enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };

struct EmulatedCublas {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};
using cublasHandle_t = EmulatedCublas*;

cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasGetVersion(cublasHandle_t handle, int* version);
const char* cublasGetStatusName(cublasStatus_t status);
const char* cublasGetStatusString(cublasStatus_t status);

// C = alpha · op(A) · op(B) + beta · C, column-major as cuBLAS's. Any math mode but the
// default (TF32) is not supported: gpu/ keeps float32 products, and a change that asked
// for TF32 must show here.
cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* a, int lda, const float* b, int ldb, const float* beta,
                           float* c, int ldc);
// The same with A and B of type `atype` = `btype` (float32 or bfloat16), C float32 and
// compute type CUBLAS_COMPUTE_32F; anything else is not supported.
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* a, cudaDataType atype, int lda, const void* b,
                            cudaDataType btype, int ldb, const void* beta, void* c,
                            cudaDataType ctype, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo);

#endif  // ACTEX_TESTS_CUDA_EMULATOR_CUBLAS_V2_H_
