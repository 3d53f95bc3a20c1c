#include "model/kernels/attention_tiles.h"

#include <immintrin.h>

#include <algorithm>

namespace actex {
namespace {

// Transposes the 8x8 block at `source` (rows `source_stride` apart) into
// `destination` (rows `destination_stride` apart).
void Transpose8x8(const float* source, int64_t source_stride, float* destination,
                  int64_t destination_stride) {
  __m256 rows[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) rows[i] = _mm256_loadu_ps(source + i * source_stride);
  __m256 pairs[8], quads[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    pairs[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
    pairs[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4) {
    quads[i] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    quads[i + 1] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    quads[i + 2] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    quads[i + 3] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(destination + i * destination_stride,
                     _mm256_permute2f128_ps(quads[i], quads[i + 4], 0x20));
    _mm256_storeu_ps(destination + (i + 4) * destination_stride,
                     _mm256_permute2f128_ps(quads[i], quads[i + 4], 0x31));
  }
}

// Lanes [0, count) of a 16-wide chunk, as two masks of eight.
void ChunkMasks(int count, __m256i* low, __m256i* high) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  *low = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lanes);
  *high = _mm256_cmpgt_epi32(_mm256_set1_epi32(count - 8), lanes);
}

// One 16-wide chunk of WeightedValues: columns [0, 16) of `values` and `out` (lanes
// outside the masks untouched unless kFull).
template <bool kFull>
void WeightedValuesChunk(const float* p, int64_t stride, int rows, int64_t keys,
                         const float* values, int64_t ld_kv, __m256i low_mask, __m256i high_mask,
                         float* out, int64_t ld_out) {
  __m256 acc[kQueryRows][2];
#pragma GCC unroll 4
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
  for (int64_t j = 0; j < keys; ++j) {
    const float* value = values + j * ld_kv;
    const __m256 low = kFull ? _mm256_loadu_ps(value) : _mm256_maskload_ps(value, low_mask);
    const __m256 high =
        kFull ? _mm256_loadu_ps(value + 8) : _mm256_maskload_ps(value + 8, high_mask);
#pragma GCC unroll 4
    for (int r = 0; r < kQueryRows; ++r) {
      const __m256 a = _mm256_broadcast_ss(p + r * stride + j);
      acc[r][0] = _mm256_fmadd_ps(a, low, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, high, acc[r][1]);
    }
  }
  // Unrolled with a test rather than looping to `rows`, so acc stays in registers.
#pragma GCC unroll 4
  for (int r = 0; r < kQueryRows; ++r) {
    if (r >= rows) break;
    if (kFull) {
      _mm256_storeu_ps(out + r * ld_out, acc[r][0]);
      _mm256_storeu_ps(out + r * ld_out + 8, acc[r][1]);
    } else {
      _mm256_maskstore_ps(out + r * ld_out, low_mask, acc[r][0]);
      _mm256_maskstore_ps(out + r * ld_out + 8, high_mask, acc[r][1]);
    }
  }
}

}  // namespace

// Kᵀ of one key/value head: kt[d * stride + j] = k[j, d] for j < tokens, zero up to
// `stride` (a multiple of kKeyTile), so score tiles never read past the keys.
void PackKeysTransposed(const float* k_head, int64_t ld_kv, int64_t tokens, int dim, int64_t stride,
                        float* kt) {
  for (int d = 0; d < dim; ++d) std::fill(kt + d * stride + tokens, kt + (d + 1) * stride, 0.0f);
  const int64_t whole_tokens = tokens - tokens % 8;
  const int whole_dims = dim - dim % 8;
  for (int64_t j = 0; j < whole_tokens; j += 8) {
    for (int d = 0; d < whole_dims; d += 8) {
      Transpose8x8(k_head + j * ld_kv + d, ld_kv, kt + d * stride + j, stride);
    }
  }
  for (int64_t j = 0; j < tokens; ++j) {  // the edges the 8x8 blocks left
    const float* key = k_head + j * ld_kv;
    for (int d = j < whole_tokens ? whole_dims : 0; d < dim; ++d) kt[d * stride + j] = key[d];
  }
}

// scores[r, j] = q_r · k_j for kQueryRows query rows (`queries[r]`, `dim` floats each)
// and keys j in [0, key_tiles * kKeyTile). Every dot product is summed in order
// d = 0..dim-1 with one FMA per term, as a BLAS kernel would.
void ScoreTiles(const float* const* queries, const float* kt, int64_t stride, int dim,
                int64_t key_tiles, float* scores) {
  for (int64_t tile = 0; tile < key_tiles; ++tile) {
    const float* column = kt + tile * kKeyTile;
    __m256 acc[kQueryRows][2];
#pragma GCC unroll 4
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
    for (int d = 0; d < dim; ++d) {
      const __m256 low = _mm256_loadu_ps(column + d * stride);
      const __m256 high = _mm256_loadu_ps(column + d * stride + 8);
#pragma GCC unroll 4
      for (int r = 0; r < kQueryRows; ++r) {
        const __m256 a = _mm256_broadcast_ss(queries[r] + d);
        acc[r][0] = _mm256_fmadd_ps(a, low, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(a, high, acc[r][1]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < kQueryRows; ++r) {
      _mm256_storeu_ps(scores + r * stride + tile * kKeyTile, acc[r][0]);
      _mm256_storeu_ps(scores + r * stride + tile * kKeyTile + 8, acc[r][1]);
    }
  }
}

// `kTiles` adjacent key tiles of ScoreTilesAvx512 (its scores at `scores`, [kQueryRows,
// stride]), kQueryRows × kTiles sums in flight.
template <int kTiles>
ACTEX_TARGET_AVX512 void ScoreTileGroupAvx512(const float* const* queries, const float* column,
                                              int64_t stride, int dim, float* scores) {
  __m512 acc[kQueryRows][kTiles];
#pragma GCC unroll 8
  for (auto& row : acc) {
    for (__m512& sum : row) sum = _mm512_setzero_ps();
  }
  for (int d = 0; d < dim; ++d) {
    __m512 keys[kTiles];
#pragma GCC unroll 2
    for (int t = 0; t < kTiles; ++t) keys[t] = _mm512_loadu_ps(column + d * stride + t * kKeyTile);
#pragma GCC unroll 4
    for (int r = 0; r < kQueryRows; ++r) {
      const __m512 q = _mm512_set1_ps(queries[r][d]);
#pragma GCC unroll 2
      for (int t = 0; t < kTiles; ++t) acc[r][t] = _mm512_fmadd_ps(q, keys[t], acc[r][t]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kQueryRows; ++r) {
#pragma GCC unroll 2
    for (int t = 0; t < kTiles; ++t) {
      _mm512_storeu_ps(scores + r * stride + t * kKeyTile, acc[r][t]);
    }
  }
}

// ScoreTiles with AVX-512: a key tile is one vector of sixteen instead of two of
// eight, each lane summed in the same order, so the scores are the same bits. Tiles go
// two at a time where they can: eight independent sums hide the FMA's latency, where
// four (one tile of four rows) would leave half of the FMA units idle.
ACTEX_TARGET_AVX512 void ScoreTilesAvx512(const float* const* queries, const float* kt,
                                          int64_t stride, int dim, int64_t key_tiles,
                                          float* scores) {
  static_assert(kKeyTile == 16);
  int64_t tile = 0;
  for (; tile + 2 <= key_tiles; tile += 2) {
    ScoreTileGroupAvx512<2>(queries, kt + tile * kKeyTile, stride, dim, scores + tile * kKeyTile);
  }
  if (tile < key_tiles) {
    ScoreTileGroupAvx512<1>(queries, kt + tile * kKeyTile, stride, dim, scores + tile * kKeyTile);
  }
}

// out_r = sum over j < keys of p[r, j] * v_j for kQueryRows rows (`rows` of them
// stored), summed in order j = 0..keys-1 with one FMA per term. Probabilities of keys
// a row may not see are zero, which adds exactly nothing.
void WeightedValues(const float* p, int64_t stride, int rows, int64_t keys, const float* v_head,
                    int64_t ld_kv, int dim, float* out, int64_t ld_out) {
  for (int first = 0; first < dim; first += 16) {
    const int width = std::min(16, dim - first);
    __m256i low_mask, high_mask;
    ChunkMasks(width, &low_mask, &high_mask);
    if (width == 16) {
      WeightedValuesChunk<true>(p, stride, rows, keys, v_head + first, ld_kv, low_mask, high_mask,
                                out + first, ld_out);
    } else {
      WeightedValuesChunk<false>(p, stride, rows, keys, v_head + first, ld_kv, low_mask, high_mask,
                                 out + first, ld_out);
    }
  }
}

// WeightedValues with AVX-512: each 16-wide chunk is one (masked) vector, each lane
// summed in the same order as the AVX2 chunks, so the context is the same bits. Two
// chunks at a time (the second masked, possibly empty): eight independent sums, as in
// ScoreTilesAvx512.
ACTEX_TARGET_AVX512 void WeightedValuesAvx512(const float* p, int64_t stride, int rows,
                                              int64_t keys, const float* v_head, int64_t ld_kv,
                                              int dim, float* out, int64_t ld_out) {
  auto lanes_of = [dim](int first) {
    const int width = std::clamp(dim - first, 0, 16);
    return static_cast<__mmask16>((1u << width) - 1);
  };
  for (int first = 0; first < dim; first += 32) {
    const __mmask16 low_lanes = lanes_of(first), high_lanes = lanes_of(first + 16);
    __m512 acc[kQueryRows][2];
#pragma GCC unroll 4
    for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();
    for (int64_t j = 0; j < keys; ++j) {
      const float* value = v_head + j * ld_kv + first;
      const __m512 low = _mm512_maskz_loadu_ps(low_lanes, value);
      const __m512 high = _mm512_maskz_loadu_ps(high_lanes, value + 16);
#pragma GCC unroll 4
      for (int r = 0; r < kQueryRows; ++r) {
        const __m512 weight = _mm512_set1_ps(p[r * stride + j]);
        acc[r][0] = _mm512_fmadd_ps(weight, low, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(weight, high, acc[r][1]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < kQueryRows; ++r) {
      if (r >= rows) break;
      _mm512_mask_storeu_ps(out + r * ld_out + first, low_lanes, acc[r][0]);
      _mm512_mask_storeu_ps(out + r * ld_out + first + 16, high_lanes, acc[r][1]);
    }
  }
}

}  // namespace actex
