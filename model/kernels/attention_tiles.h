#ifndef ACTEX_MODEL_KERNELS_ATTENTION_TILES_H_
#define ACTEX_MODEL_KERNELS_ATTENTION_TILES_H_

#include <cstdint>

#include "model/kernels/cpu_isa.h"

namespace actex {

// The two products of causal attention, in tiles sized for the vector registers:
// scores = Q Kᵀ and context = P V, for kQueryRows queries at a time. Each has an
// AVX2 and an AVX-512 form that sum every lane in the same order, so both give the
// same bits; CausalAttention (attention.h) picks one by ActiveIsa().

// Queries handled together: each Kᵀ row loaded feeds this many FMAs.
constexpr int kQueryRows = 4;
// Keys per score tile (two vectors of eight).
constexpr int64_t kKeyTile = 16;

// Kᵀ of one key/value head: kt[d * stride + j] = k[j, d] for j < tokens, zero up to
// `stride` (a multiple of kKeyTile), so score tiles never read past the keys.
void PackKeysTransposed(const float* k_head, int64_t ld_kv, int64_t tokens, int dim, int64_t stride,
                        float* kt);

// scores[r, j] = q_r · k_j for kQueryRows query rows (`queries[r]`, `dim` floats each)
// and keys j in [0, key_tiles * kKeyTile). Every dot product is summed in order
// d = 0..dim-1 with one FMA per term, as a BLAS kernel would.
void ScoreTiles(const float* const* queries, const float* kt, int64_t stride, int dim,
                int64_t key_tiles, float* scores);

// ScoreTiles with AVX-512: a key tile is one vector of sixteen instead of two of
// eight, each lane summed in the same order, so the scores are the same bits.
ACTEX_TARGET_AVX512 void ScoreTilesAvx512(const float* const* queries, const float* kt,
                                          int64_t stride, int dim, int64_t key_tiles,
                                          float* scores);

// out_r = sum over j < keys of p[r, j] * v_j for kQueryRows rows (`rows` of them
// stored), summed in order j = 0..keys-1 with one FMA per term. Probabilities of keys
// a row may not see are zero, which adds exactly nothing.
void WeightedValues(const float* p, int64_t stride, int rows, int64_t keys, const float* v_head,
                    int64_t ld_kv, int dim, float* out, int64_t ld_out);

// WeightedValues with AVX-512: each 16-wide chunk is one (masked) vector, each lane
// summed in the same order as the AVX2 chunks, so the context is the same bits.
ACTEX_TARGET_AVX512 void WeightedValuesAvx512(const float* p, int64_t stride, int rows,
                                              int64_t keys, const float* v_head, int64_t ld_kv,
                                              int dim, float* out, int64_t ld_out);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_ATTENTION_TILES_H_
