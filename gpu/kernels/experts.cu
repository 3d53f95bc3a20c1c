// The row moves of a mixture of experts (gpu/kernels/experts.h).

#include "gpu/kernels/experts.h"

namespace actex::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = 8;

__global__ void GatherKernel(const float* source, const int32_t* rows, int64_t count, int64_t width,
                             float* out) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count * width; i += stride) {
    const int64_t r = i / width;
    out[i] = source[int64_t{rows[r]} * width + i % width];
  }
}

__global__ void AddWeightedKernel(const float* values, const int32_t* rows, const float* weights,
                                  int64_t count, int64_t width, float* target) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count * width; i += stride) {
    const int64_t r = i / width;
    float& cell = target[int64_t{rows[r]} * width + i % width];
    cell = __fadd_rn(cell, __fmul_rn(values[i], weights[r]));
  }
}

__global__ void AddGatedKernel(const float* values, const float* normed, const float* gate,
                               int64_t tokens, int64_t width, float* target) {
  const int64_t t = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (t >= tokens) return;
  double logit = 0.0;
  for (int64_t i = lane; i < width; i += 32) logit += double{normed[t * width + i]} * gate[i];
  for (int offset = 16; offset > 0; offset >>= 1) {
    logit += __shfl_xor_sync(0xffffffffu, logit, offset);
  }
  const float scale = 1.0f / (1.0f + expf(-static_cast<float>(logit)));  // sigmoid
  for (int64_t i = lane; i < width; i += 32) {
    target[t * width + i] =
        __fadd_rn(target[t * width + i], __fmul_rn(values[t * width + i], scale));
  }
}

unsigned GridFor(int64_t count) { return GridStrideBlocks(count, kThreads); }

}  // namespace

cudaError_t GatherRows(const float* source, const int32_t* rows, int64_t count, int64_t width,
                       float* out, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  GatherKernel<<<GridFor(count * width), kThreads, 0, stream>>>(source, rows, count, width, out);
  return cudaGetLastError();
}

cudaError_t AddWeightedRows(const float* values, const int32_t* rows, const float* weights,
                            int64_t count, int64_t width, float* target, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  AddWeightedKernel<<<GridFor(count * width), kThreads, 0, stream>>>(values, rows, weights, count,
                                                                     width, target);
  return cudaGetLastError();
}

cudaError_t AddGatedRows(const float* values, const float* normed, const float* gate,
                         int64_t tokens, int64_t width, float* target, cudaStream_t stream) {
  if (tokens <= 0) return cudaSuccess;
  AddGatedKernel<<<BlocksFor(tokens, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
      values, normed, gate, tokens, width, target);
  return cudaGetLastError();
}

}  // namespace actex::gpu
