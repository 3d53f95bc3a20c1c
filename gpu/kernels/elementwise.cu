// The element-wise kernels of the GPU forward (gpu/kernels/elementwise.h): one thread per
// value, grid-strided.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpu/kernels/elementwise.h"

namespace actex::gpu {
namespace {

constexpr int kThreads = 256;

unsigned GridFor(int64_t count) { return GridStrideBlocks(count, kThreads); }

__device__ int64_t FirstIndex() { return int64_t{blockIdx.x} * blockDim.x + threadIdx.x; }
__device__ int64_t Stride() { return int64_t{gridDim.x} * blockDim.x; }

__device__ float Widen(const void* values, StoredDtype dtype, int64_t i) {
  switch (dtype) {
    case StoredDtype::kBF16:
      return __uint_as_float(static_cast<uint32_t>(static_cast<const uint16_t*>(values)[i]) << 16);
    case StoredDtype::kF16:
      return __half2float(static_cast<const __half*>(values)[i]);
    default:
      return static_cast<const float*>(values)[i];
  }
}

// 0.5·x · (1 + tanh(β · (x + κ · x³))), each operation rounded as PyTorch's.
__device__ float GeluTanhOf(float x) {
  const float beta = 0.7978845608028654f;  // sqrt(2/π)
  const float cube = __fmul_rn(__fmul_rn(x, x), x);
  const float inner = __fmul_rn(beta, __fadd_rn(x, __fmul_rn(0.044715f, cube)));
  return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, tanhf(inner)));
}

__global__ void EmbedKernel(const void* table, const void* position_table, StoredDtype dtype,
                            int64_t hidden, const int32_t* ids, const int32_t* positions,
                            int64_t tokens, float scale, float* out) {
  for (int64_t i = FirstIndex(); i < tokens * hidden; i += Stride()) {
    const int64_t t = i / hidden, column = i % hidden;
    float value = Widen(table, dtype, int64_t{ids[t]} * hidden + column);
    if (scale > 0.0f) value = __fmul_rn(value, scale);
    if (position_table != nullptr) {
      value =
          __fadd_rn(value, Widen(position_table, dtype, int64_t{positions[t]} * hidden + column));
    }
    out[i] = value;
  }
}

__global__ void RotateKernel(float* rows, int64_t tokens, int64_t ld, int heads, int head_dim,
                             const int32_t* positions, const float* cos, const float* sin) {
  const int half = head_dim / 2;
  const int64_t pairs = tokens * heads * half;
  for (int64_t i = FirstIndex(); i < pairs; i += Stride()) {
    const int64_t t = i / (int64_t{heads} * half);
    const int head = static_cast<int>(i / half % heads);
    const int j = static_cast<int>(i % half);
    float* x = rows + t * ld + int64_t{head} * head_dim;  // [head_dim]
    const int64_t table_index = int64_t{positions[t]} * half + j;
    const float c = cos[table_index], s = sin[table_index];
    const float first = x[j], second = x[j + half];
    x[j] = __fadd_rn(__fmul_rn(first, c), __fmul_rn(-second, s));
    x[j + half] = __fadd_rn(__fmul_rn(second, c), __fmul_rn(first, s));
  }
}

__global__ void ActivateKernel(Activation activation, float* x, const float* up, int64_t count) {
  for (int64_t i = FirstIndex(); i < count; i += Stride()) {
    const float value = x[i];
    switch (activation) {
      case Activation::kSiluTimesUp:  // g / (1 + e^-g) · u, as PyTorch's SiLU
        x[i] = __fmul_rn(__fdiv_rn(value, __fadd_rn(1.0f, expf(-value))), up[i]);
        break;
      case Activation::kGeluTanhTimesUp:
        x[i] = __fmul_rn(GeluTanhOf(value), up[i]);
        break;
      case Activation::kGeluTanh:
        x[i] = GeluTanhOf(value);
        break;
    }
  }
}

__global__ void AddBiasKernel(float* rows, int64_t tokens, int64_t width, const float* bias) {
  for (int64_t i = FirstIndex(); i < tokens * width; i += Stride()) rows[i] += bias[i % width];
}

__global__ void AddKernel(float* target, const float* addend, int64_t count) {
  for (int64_t i = FirstIndex(); i < count; i += Stride()) target[i] += addend[i];
}

__global__ void WidenKernel(const void* values, StoredDtype dtype, int64_t count, float* out) {
  for (int64_t i = FirstIndex(); i < count; i += Stride()) out[i] = Widen(values, dtype, i);
}

__global__ void RoundKernel(const float* values, int64_t count, uint16_t* out) {
  for (int64_t i = FirstIndex(); i < count; i += Stride()) {
    out[i] = __bfloat16_as_ushort(__float2bfloat16_rn(values[i]));
  }
}

}  // namespace

cudaError_t EmbedRows(const void* table, const void* position_table, StoredDtype dtype,
                      int64_t hidden, const int32_t* ids, const int32_t* positions, int64_t tokens,
                      float scale, float* out, cudaStream_t stream) {
  if (tokens <= 0) return cudaSuccess;
  EmbedKernel<<<GridFor(tokens * hidden), kThreads, 0, stream>>>(
      table, position_table, dtype, hidden, ids, positions, tokens, scale, out);
  return cudaGetLastError();
}

cudaError_t RotateRows(float* rows, int64_t tokens, int64_t ld, int heads, int head_dim,
                       const int32_t* positions, const float* cos, const float* sin,
                       cudaStream_t stream) {
  if (tokens <= 0 || heads <= 0) return cudaSuccess;
  RotateKernel<<<GridFor(tokens * heads * (head_dim / 2)), kThreads, 0, stream>>>(
      rows, tokens, ld, heads, head_dim, positions, cos, sin);
  return cudaGetLastError();
}

cudaError_t Activate(Activation activation, float* x, const float* up, int64_t count,
                     cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  ActivateKernel<<<GridFor(count), kThreads, 0, stream>>>(activation, x, up, count);
  return cudaGetLastError();
}

cudaError_t AddBiasRows(float* rows, int64_t tokens, int64_t width, const float* bias,
                        cudaStream_t stream) {
  if (tokens <= 0) return cudaSuccess;
  AddBiasKernel<<<GridFor(tokens * width), kThreads, 0, stream>>>(rows, tokens, width, bias);
  return cudaGetLastError();
}

cudaError_t AddInPlace(float* target, const float* addend, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  AddKernel<<<GridFor(count), kThreads, 0, stream>>>(target, addend, count);
  return cudaGetLastError();
}

cudaError_t WidenToFloat(const void* values, StoredDtype dtype, int64_t count, float* out,
                         cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  WidenKernel<<<GridFor(count), kThreads, 0, stream>>>(values, dtype, count, out);
  return cudaGetLastError();
}

cudaError_t RoundToBFloat16(const float* values, int64_t count, uint16_t* out,
                            cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  RoundKernel<<<GridFor(count), kThreads, 0, stream>>>(values, count, out);
  return cudaGetLastError();
}

}  // namespace actex::gpu
