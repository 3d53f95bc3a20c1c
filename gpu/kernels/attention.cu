// Causal attention over packed sequences on the GPU (gpu/kernels/attention.h).
//
// A block takes kWarpsPerBlock consecutive queries of one head, a warp per query. The
// keys and values its queries see are visited in tiles of 32, each tile staged in shared
// memory once for all the block's warps. In a tile, lane j scores key j (q·k over the
// head's dims, scaled, softcapped), the warp folds the tile into its running maximum m
// and sum l (online softmax: scores relative to m, earlier terms rescaled by e^(m_old − m)),
// and each lane adds the tile's weighted values to the dims it owns (d = lane + 32·r);
// at the end it writes c / l. Keys a query does not see (another sequence, past the
// window, after it) weigh 0; a tile with none it sees is skipped by that warp.

#include "gpu/kernels/attention.h"

namespace actex::gpu {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kThreads = kWarpsPerBlock * 32;
constexpr int kTileKeys = 32;  // a lane per key

__device__ float WarpMax(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  return value;
}

__device__ float WarpSum(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

// The first key `query` sees: its sequence's first token, or the window's.
__device__ int64_t FirstKey(const int32_t* sequence_start, int64_t query, int64_t window) {
  int64_t first = sequence_start[query];
  if (window > 0 && query - window + 1 > first) first = query - window + 1;
  return first;
}

// Shared memory of a block, in floats: the tile's keys [kTileKeys, dim + 1] (a padded
// row, so that lanes reading one key each hit different banks), its values
// [kTileKeys, dim], each warp's query [dim] and its tile weights [kTileKeys].
__host__ __device__ int SharedFloats(int dim) {
  return kTileKeys * (dim + 1) + kTileKeys * dim + kWarpsPerBlock * (dim + kTileKeys);
}

// kDimsPerLane: the context dims a lane owns (head_dim / 32 rounded up), as a constant so
// that they stay in registers; a kernel per bound keeps small heads' registers few.
template <int kDimsPerLane>
__global__ void AttentionKernel(const float* queries, const float* keys, const float* values,
                                const int32_t* sequence_start, int64_t tokens, AttentionShape shape,
                                float* context) {
  extern __shared__ float shared[];
  const int dim = shape.head_dim;
  float* tile_keys = shared;                               // [kTileKeys, dim + 1]
  float* tile_values = tile_keys + kTileKeys * (dim + 1);  // [kTileKeys, dim]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* query_row = tile_values + kTileKeys * dim + warp * (dim + kTileKeys);  // [dim]
  float* weights = query_row + dim;                                             // [kTileKeys]

  const int64_t first_query = int64_t{blockIdx.x} * kWarpsPerBlock;
  const int64_t query = first_query + warp;
  const bool active = query < tokens;  // an idle warp still takes part in the block's syncs
  const int head = blockIdx.y;         // this shard's
  const int64_t ld_q = int64_t{shape.heads} * dim;
  const int64_t ld_kv = int64_t{shape.kv_heads} * dim;
  const int kv_head = (shape.first_head + head) / shape.group - shape.first_kv_head;
  const float* k = keys + int64_t{kv_head} * dim;    // [tokens, dim], ld_kv
  const float* v = values + int64_t{kv_head} * dim;  // [tokens, dim], ld_kv

  if (active) {
    const float* q = queries + query * ld_q + int64_t{head} * dim;  // [dim]
    for (int d = lane; d < dim; d += 32) query_row[d] = q[d];
  }
  // Keys from the block's first query's first key to its last query: every key a
  // query of the block sees (first keys grow with the query).
  const int64_t last_query = min(first_query + kWarpsPerBlock, tokens) - 1;
  const int64_t block_first_key = FirstKey(sequence_start, first_query, shape.window);
  const int64_t first_key = active ? FirstKey(sequence_start, query, shape.window) : 0;
  const float divisor = sqrtf(static_cast<float>(dim));

  float running_max = -INFINITY, running_sum = 0.0f;
  float c_lane[kDimsPerLane];
#pragma unroll
  for (int r = 0; r < kDimsPerLane; ++r) c_lane[r] = 0.0f;

  for (int64_t tile = block_first_key; tile <= last_query; tile += kTileKeys) {
    __syncthreads();  // the previous tile is read by every warp
    for (int i = threadIdx.x; i < kTileKeys * dim; i += kThreads) {
      const int j = i / dim, d = i % dim;
      const int64_t key = tile + j;
      const bool loaded = key <= last_query;
      tile_keys[j * (dim + 1) + d] = loaded ? k[key * ld_kv + d] : 0.0f;
      tile_values[j * dim + d] = loaded ? v[key * ld_kv + d] : 0.0f;
    }
    __syncthreads();
    // Whether this warp's query sees any key of the tile (the same for all its lanes).
    if (!active || tile + kTileKeys - 1 < first_key || tile > query) continue;

    const int64_t key = tile + lane;
    const bool sees = key >= first_key && key <= query;
    float score = 0.0f;
    for (int d = 0; d < dim; ++d)
      score = fmaf(query_row[d], tile_keys[lane * (dim + 1) + d], score);
    score = shape.multiplier != 0.0f ? score * shape.multiplier : score / divisor;
    if (shape.softcap > 0.0f) score = tanhf(score / shape.softcap) * shape.softcap;
    const float new_max = fmaxf(running_max, WarpMax(sees ? score : -INFINITY));
    const float rescale = expf(running_max - new_max);  // 0 at the first tile
    const float weight = sees ? expf(score - new_max) : 0.0f;
    running_sum = running_sum * rescale + WarpSum(weight);
    running_max = new_max;
    weights[lane] = weight;
    __syncwarp();
#pragma unroll
    for (int r = 0; r < kDimsPerLane; ++r) {
      const int d = lane + 32 * r;
      if (d >= dim) break;
      float sum = c_lane[r] * rescale;
      for (int j = 0; j < kTileKeys; ++j) sum = fmaf(weights[j], tile_values[j * dim + d], sum);
      c_lane[r] = sum;
    }
    __syncwarp();  // the weights are read before the next tile's are written
  }
  if (!active) return;
  float* out = context + query * ld_q + int64_t{head} * dim;  // [dim]
#pragma unroll
  for (int r = 0; r < kDimsPerLane; ++r) {
    const int d = lane + 32 * r;
    if (d < dim) out[d] = c_lane[r] / running_sum;
  }
}

}  // namespace

cudaError_t CausalAttention(const float* queries, const float* keys, const float* values,
                            const int32_t* sequence_start, int64_t tokens,
                            const AttentionShape& shape, float* context, cudaStream_t stream) {
  if (tokens <= 0 || shape.heads <= 0) return cudaSuccess;
  const int shared_bytes = SharedFloats(shape.head_dim) * static_cast<int>(sizeof(float));
  const dim3 grid(BlocksFor(tokens, kWarpsPerBlock), static_cast<unsigned>(shape.heads));
  auto launch = [&](auto kernel) {
    // Past 48 KB (head_dim 256: ~75 KB) a kernel must ask for its dynamic shared memory.
    const cudaError_t allowed =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes);
    if (allowed != cudaSuccess) return allowed;
    kernel<<<grid, kThreads, shared_bytes, stream>>>(queries, keys, values, sequence_start, tokens,
                                                     shape, context);
    return cudaGetLastError();
  };
  if (shape.head_dim <= 64) return launch(AttentionKernel<2>);
  if (shape.head_dim <= 128) return launch(AttentionKernel<4>);
  return launch(AttentionKernel<kMaxHeadDim / 32>);
}

}  // namespace actex::gpu
