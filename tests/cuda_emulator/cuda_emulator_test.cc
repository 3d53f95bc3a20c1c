// The CUDA emulator itself: a launch runs every thread once with CUDA's built-in
// variables, the shuffles give the lanes CUDA's give, a barrier holds every thread until
// all arrive, a launch CUDA refuses runs nothing, and a sync that cannot complete ends
// the process naming its block rather than letting a wrong kernel pass.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/cuda_emulator/cublas_v2.h"
#include "tests/cuda_emulator/cuda_runtime.h"

namespace actex::cuda_emulator {
namespace {

TEST(CudaEmulatorLaunch, RunsEveryThreadOfEveryBlockOnceWithItsBuiltInVariables) {
  const dim3 grid(3, 2), block(4, 2, 2);
  std::vector<int> runs(3 * 2 * 16, 0);  // [blocks, threads per block]
  Launch(grid, block, 0, nullptr, /*synchronising=*/false, [&] {
    ASSERT_EQ(blockDim.x * blockDim.y * blockDim.z, 16u);
    ASSERT_EQ(gridDim.x * gridDim.y, 6u);
    const unsigned block_number = blockIdx.x + gridDim.x * blockIdx.y;
    const unsigned thread_number =
        threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    ++runs[block_number * 16 + thread_number];
  });
  EXPECT_EQ(runs, std::vector<int>(runs.size(), 1));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaEmulatorLaunch, ShufflesGiveEachLaneTheValueOfTheLaneCudaNames) {
  std::vector<float> xor_1(64), down_4(64), from_3(64);  // [threads]: two warps
  Launch(dim3(1), dim3(64), 0, nullptr, /*synchronising=*/true, [&] {
    const int t = static_cast<int>(threadIdx.x);
    const float mine = static_cast<float>(t);
    xor_1[t] = __shfl_xor_sync(0xffffffffu, mine, 1);
    down_4[t] = __shfl_down_sync(0xffffffffu, mine, 4);
    from_3[t] = __shfl_sync(0xffffffffu, mine, 3);
  });
  for (int t = 0; t < 64; ++t) {
    const int warp_start = t / 32 * 32, lane = t % 32;
    EXPECT_EQ(xor_1[t], static_cast<float>(warp_start + (lane ^ 1))) << t;
    // A lane whose source is past the warp keeps its own value.
    EXPECT_EQ(down_4[t], static_cast<float>(lane + 4 < 32 ? t + 4 : t)) << t;
    EXPECT_EQ(from_3[t], static_cast<float>(warp_start + 3)) << t;
  }
}

TEST(CudaEmulatorLaunch, ABlockSyncHoldsEveryThreadUntilTheBlocksWritesAreDone) {
  constexpr int kThreads = 96;
  std::vector<float> seen(2 * kThreads);  // [blocks, threads]
  Launch(dim3(2), dim3(kThreads), kThreads * sizeof(float), nullptr, /*synchronising=*/true, [&] {
    auto* shared = static_cast<float*>(DynamicSharedMemory());  // [threads]
    const unsigned t = threadIdx.x;
    shared[t] = static_cast<float>(blockIdx.x * 1000 + t);
    __syncthreads();
    seen[blockIdx.x * kThreads + t] = shared[(t + 1) % kThreads];  // a later thread's
  });
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(seen[b * kThreads + t], static_cast<float>(b * 1000 + (t + 1) % kThreads));
    }
  }
}

TEST(CudaEmulatorLaunch, ALaunchCudaRefusesRunsNothingAndSetsTheLastError) {
  int runs = 0;
  Launch(dim3(1), dim3(2048), 0, nullptr, false, [&] { ++runs; });  // over 1024 threads
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // read once, then cleared
  Launch(dim3(1), dim3(32), 228 * 1024, nullptr, false, [&] { ++runs; });  // over 227 KB
  EXPECT_STREQ(cudaGetErrorName(cudaGetLastError()), "cudaErrorInvalidConfiguration");
  EXPECT_EQ(runs, 0);
}

TEST(CudaEmulatorLaunchDeathTest, SyncsThatNotEveryThreadReachesEndTheProcess) {
  EXPECT_DEATH(Launch(dim3(1), dim3(32), 0, nullptr, true,
                      [] {
                        if (threadIdx.x < 16) {
                          __syncthreads();
                        } else {
                          __syncwarp();
                        }
                      }),
               "block \\(0,0,0\\) deadlocked");
  EXPECT_DEATH(Launch(dim3(1), dim3(32), 0, nullptr, false, [] { __syncthreads(); }),
               "launched as one that does not");
}

TEST(CudaEmulatorMemory, DeviceMemoryNeverWrittenReadsAsNan) {
  float* values = nullptr;
  ASSERT_EQ(cudaMalloc(&values, 3 * sizeof(float)), cudaSuccess);
  EXPECT_TRUE(std::isnan(values[0]) && std::isnan(values[2]));
  EXPECT_EQ(cudaFree(values), cudaSuccess);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);  // the emulator has one GPU
}

TEST(CudaEmulatorCublas, Bf16ProductsAreTheWidenedValuesInFloat32AndTf32IsRefused) {
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  // A [2, 1] and B [1, 2] (column-major), bfloat16 1.5, 2, -3 and 0.25.
  const uint16_t a[] = {0x3fc0, 0x4000}, b[] = {0xc040, 0x3e80};
  float c[4] = {};  // [2, 2]
  const float one = 1.0f, zero = 0.0f;
  ASSERT_EQ(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 1, &one, a, CUDA_R_16BF, 2, b,
                         CUDA_R_16BF, 1, &zero, c, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{-4.5f, -6.0f, 0.375f, 0.5f}));
  ASSERT_EQ(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  const float a32[] = {1.0f}, b32[] = {1.0f};
  EXPECT_EQ(
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, a32, 1, b32, 1, &zero, c, 1),
      CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

}  // namespace
}  // namespace actex::cuda_emulator
