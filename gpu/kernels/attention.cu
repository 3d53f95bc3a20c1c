// Causal attention over packed sequences on the GPU (gpu/kernels/attention.h).
//
// One warp per (query, head); a block's warps take consecutive queries of one head, so
// they read the same keys and values through the cache. Each lane holds head_dim / 32
// dimensions of the query and of the running context. Keys are visited in order: the
// warp sums q·k with shuffles, scales (and softcaps) the score, and folds it into a
// running maximum m, sum l and context c (c·e^(m_old − m) + e^(s − m)·v), the online
// form of softmax(scores)·V; at the end c / l.

#include "gpu/kernels/attention.h"

namespace actex::gpu {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kDimsPerLane = kMaxHeadDim / 32;

__device__ float WarpSum(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

__global__ void AttentionKernel(const float* queries, const float* keys, const float* values,
                                const int32_t* sequence_start, int64_t tokens,
                                AttentionShape shape, float* context) {
  const int64_t query = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int head = blockIdx.y;  // this shard's
  if (query >= tokens) return;
  const int dim = shape.head_dim;
  const int64_t ld_q = int64_t{shape.heads} * dim;
  const int64_t ld_kv = int64_t{shape.kv_heads} * dim;
  const int kv_head = (shape.first_head + head) / shape.group - shape.first_kv_head;
  const float* q = queries + query * ld_q + int64_t{head} * dim;  // [dim]
  const float* k = keys + int64_t{kv_head} * dim;                 // [tokens, dim], ld_kv
  const float* v = values + int64_t{kv_head} * dim;               // [tokens, dim], ld_kv

  float q_lane[kDimsPerLane], c_lane[kDimsPerLane];
#pragma unroll
  for (int r = 0; r < kDimsPerLane; ++r) {
    const int d = lane + 32 * r;
    q_lane[r] = d < dim ? q[d] : 0.0f;
    c_lane[r] = 0.0f;
  }
  const float divisor = sqrtf(static_cast<float>(dim));
  int64_t first_key = sequence_start[query];
  if (shape.window > 0 && query - shape.window + 1 > first_key) {
    first_key = query - shape.window + 1;
  }
  float running_max = -INFINITY, running_sum = 0.0f;
  for (int64_t key = first_key; key <= query; ++key) {
    const float* k_row = k + key * ld_kv;
    float partial = 0.0f;
#pragma unroll
    for (int r = 0; r < kDimsPerLane; ++r) {
      const int d = lane + 32 * r;
      if (d < dim) partial = fmaf(q_lane[r], k_row[d], partial);
    }
    float score = WarpSum(partial);
    score = shape.multiplier != 0.0f ? score * shape.multiplier : score / divisor;
    if (shape.softcap > 0.0f) score = tanhf(score / shape.softcap) * shape.softcap;
    const float new_max = fmaxf(running_max, score);
    const float rescale = expf(running_max - new_max);  // 0 at the first key
    const float weight = expf(score - new_max);
    running_sum = running_sum * rescale + weight;
    const float* v_row = v + key * ld_kv;
#pragma unroll
    for (int r = 0; r < kDimsPerLane; ++r) {
      const int d = lane + 32 * r;
      if (d < dim) c_lane[r] = c_lane[r] * rescale + weight * v_row[d];
    }
    running_max = new_max;
  }
  float* out = context + query * ld_q + int64_t{head} * dim;  // [dim]
#pragma unroll
  for (int r = 0; r < kDimsPerLane; ++r) {
    const int d = lane + 32 * r;
    if (d < dim) out[d] = c_lane[r] / running_sum;
  }
}

}  // namespace

void CausalAttention(const float* queries, const float* keys, const float* values,
                     const int32_t* sequence_start, int64_t tokens, const AttentionShape& shape,
                     float* context, cudaStream_t stream) {
  if (tokens <= 0 || shape.heads <= 0) return;
  const dim3 grid(BlocksFor(tokens, kWarpsPerBlock), static_cast<unsigned>(shape.heads));
  AttentionKernel<<<grid, kWarpsPerBlock * 32, 0, stream>>>(queries, keys, values, sequence_start,
                                                            tokens, shape, context);
}

}  // namespace actex::gpu
