// RMSNorm and LayerNorm on the GPU (gpu/kernels/norms.h): one warp per row, each lane a
// stride of the row, the sums in double as the CPU kernels keep them.

#include "gpu/kernels/norms.h"

namespace actex::gpu {
namespace {

constexpr int kWarpsPerBlock = 8;

__device__ double WarpSum(double value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

__global__ void RmsNormKernel(const float* x, int64_t rows, int64_t width, const float* weight,
                              float eps, float* y) {
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* in = x + row * width;  // [width]
  float* out = y + row * width;       // [width]
  double squares = 0.0;
  for (int64_t i = lane; i < width; i += 32) squares += double{in[i]} * in[i];
  squares = WarpSum(squares);
  const float variance = static_cast<float>(squares / static_cast<double>(width));
  const float inverse_rms = 1.0f / sqrtf(variance + eps);
  for (int64_t i = lane; i < width; i += 32) {
    const float normalized = __fmul_rn(in[i], inverse_rms);
    out[i] = __fmul_rn(weight[i], normalized);
  }
}

__global__ void LayerNormKernel(const float* x, int64_t rows, int64_t width, const float* weight,
                                const float* bias, float eps, float* y) {
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* in = x + row * width;  // [width]
  float* out = y + row * width;       // [width]
  double sum = 0.0;
  for (int64_t i = lane; i < width; i += 32) sum += in[i];
  const double mean = WarpSum(sum) / static_cast<double>(width);
  double squares = 0.0;
  for (int64_t i = lane; i < width; i += 32) {
    const double centered = in[i] - mean;
    squares += centered * centered;
  }
  squares = WarpSum(squares);
  const float inverse_std =
      static_cast<float>(1.0 / sqrt(squares / static_cast<double>(width) + eps));
  const float mean_f = static_cast<float>(mean);
  for (int64_t i = lane; i < width; i += 32) {
    const float normalized = __fmul_rn(__fsub_rn(in[i], mean_f), inverse_std);
    out[i] = __fadd_rn(__fmul_rn(normalized, weight[i]), bias[i]);
  }
}

__global__ void SumSquaresKernel(const float* queries, int64_t q_width, const float* keys,
                                 int64_t kv_width, int64_t counted_first, int64_t counted_end,
                                 int64_t tokens, float* sums) {
  const int64_t t = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (t >= tokens) return;
  double q_squares = 0.0, k_squares = 0.0;
  for (int64_t i = lane; i < q_width; i += 32) {
    q_squares += double{queries[t * q_width + i]} * queries[t * q_width + i];
  }
  for (int64_t i = counted_first + lane; i < counted_end; i += 32) {
    k_squares += double{keys[t * kv_width + i]} * keys[t * kv_width + i];
  }
  q_squares = WarpSum(q_squares);
  k_squares = WarpSum(k_squares);
  if (lane == 0) {
    sums[2 * t] = static_cast<float>(q_squares);
    sums[2 * t + 1] = static_cast<float>(k_squares);
  }
}

__global__ void ScaleByRmsKernel(float* rows, int64_t width, const float* sums, int which,
                                 float count, float eps, const float* weight, int64_t tokens) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < tokens * width;
       i += stride) {
    const int64_t t = i / width;
    const float inverse_rms = 1.0f / sqrtf(sums[2 * t + which] / count + eps);
    rows[i] = __fmul_rn(weight[i % width], __fmul_rn(rows[i], inverse_rms));
  }
}

}  // namespace

cudaError_t SumSquaresOfRows(const float* queries, int64_t q_width, const float* keys,
                             int64_t kv_width, int64_t counted_first, int64_t counted_end,
                             int64_t tokens, float* sums, cudaStream_t stream) {
  if (tokens <= 0) return cudaSuccess;
  SumSquaresKernel<<<BlocksFor(tokens, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
      queries, q_width, keys, kv_width, counted_first, counted_end, tokens, sums);
  return cudaGetLastError();
}

cudaError_t ScaleRowsByRms(float* rows, int64_t width, const float* sums, int which, float count,
                           float eps, const float* weight, int64_t tokens, cudaStream_t stream) {
  if (tokens <= 0) return cudaSuccess;
  ScaleByRmsKernel<<<GridStrideBlocks(tokens * width, 256), 256, 0, stream>>>(
      rows, width, sums, which, count, eps, weight, tokens);
  return cudaGetLastError();
}

cudaError_t RmsNormRows(const float* x, int64_t rows, int64_t width, const float* weight, float eps,
                        float* y, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  RmsNormKernel<<<BlocksFor(rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
      x, rows, width, weight, eps, y);
  return cudaGetLastError();
}

cudaError_t LayerNormRows(const float* x, int64_t rows, int64_t width, const float* weight,
                          const float* bias, float eps, float* y, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  LayerNormKernel<<<BlocksFor(rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
      x, rows, width, weight, bias, eps, y);
  return cudaGetLastError();
}

}  // namespace actex::gpu
