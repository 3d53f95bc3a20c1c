#include "model/kernels/attention.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "model/kernels/attention_tiles.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/vector_exp.h"
#include "model/kernels/vector_tanh.h"

namespace actex {
namespace {

// Loads lanes [0, count) of `row` (count <= 8), filling the rest with `fill`.
__m256 LoadPartial(const float* row, int64_t count, float fill) {
  alignas(32) float lanes[8];
  std::fill(lanes, lanes + 8, fill);
  std::copy(row, row + count, lanes);
  return _mm256_load_ps(lanes);
}

void StorePartial(float* row, int64_t count, __m256 values) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, values);
  std::copy(lanes, lanes + count, row);
}

float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The softmax's exp(x - row_max) of `row`'s first `count` values in place (`count` a
// multiple of 16), added into `sum`: sixteen lanes at a time, each half added as the
// eight-lane loop adds it, so the sum and every value are the same bits.
ACTEX_TARGET_AVX512 __m256 ExpAndSumAvx512(float* row, int64_t count, float row_max, __m256 sum) {
  const __m512 maximum = _mm512_set1_ps(row_max);
  for (int64_t j = 0; j < count; j += 16) {
    const __m512 e = Exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j), maximum));
    _mm512_storeu_ps(row + j, e);
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
    sum = _mm256_add_ps(sum, _mm512_extractf32x8_ps(e, 1));
  }
  return sum;
}

// How a row of raw scores becomes logits (see AttentionHeads).
struct ScoreScaling {
  float divisor = 1.0f;  // used when multiplier is 0
  float multiplier = 0.0f;
  float softcap = 0.0f;
};

// Turns row `query` of raw scores (keys [0, key_end)) into probabilities, leaving
// zeros for the keys the mask hides (those HF sets to finfo.min, whose exp is 0):
// keys before `first_visible` (sliding window) and after `query`. As HF: scaled scores
// (and softcap), then exp(s - max) / sum in float32.
void SoftmaxCausalRow(float* row, int64_t first_visible, int64_t query, int64_t key_end,
                      const ScoreScaling& scaling, bool avx512) {
  std::fill(row, row + first_visible, 0.0f);
  float* visible_row = row + first_visible;
  const int64_t visible = query + 1 - first_visible;
  const int64_t whole = visible - visible % 8;
  const __m256 divisor = _mm256_set1_ps(scaling.divisor);
  const __m256 multiplier = _mm256_set1_ps(scaling.multiplier);
  auto scale = [&](__m256 scores) {
    return scaling.multiplier != 0.0f ? _mm256_mul_ps(scores, multiplier)
                                      : _mm256_div_ps(scores, divisor);
  };
  for (int64_t j = 0; j < whole; j += 8) {
    _mm256_storeu_ps(visible_row + j, scale(_mm256_loadu_ps(visible_row + j)));
  }
  if (whole < visible) {
    StorePartial(visible_row + whole, visible - whole,
                 scale(LoadPartial(visible_row + whole, visible - whole, 0.0f)));
  }
  if (scaling.softcap > 0.0f) {  // cap · tanh(s / cap), as HF's Gemma 2 and 3
    const __m256 cap = _mm256_set1_ps(scaling.softcap);
    auto soften = [&](__m256 scores) {
      return _mm256_mul_ps(Tanh8(_mm256_div_ps(scores, cap)), cap);
    };
    for (int64_t j = 0; j < whole; j += 8) {
      _mm256_storeu_ps(visible_row + j, soften(_mm256_loadu_ps(visible_row + j)));
    }
    if (whole < visible) {
      StorePartial(visible_row + whole, visible - whole,
                   soften(LoadPartial(visible_row + whole, visible - whole, 0.0f)));
    }
  }
  __m256 maximum = _mm256_set1_ps(-INFINITY);
  for (int64_t j = 0; j < whole; j += 8) {
    maximum = _mm256_max_ps(maximum, _mm256_loadu_ps(visible_row + j));
  }
  if (whole < visible) {
    maximum = _mm256_max_ps(maximum, LoadPartial(visible_row + whole, visible - whole, -INFINITY));
  }
  const float max_value = HorizontalMax(maximum);
  const __m256 row_max = _mm256_set1_ps(max_value);

  __m256 sum = _mm256_setzero_ps();
  int64_t exponentiated = 0;  // the AVX-512 path takes whole pairs of eight
  if (avx512) {
    exponentiated = whole - whole % 16;
    sum = ExpAndSumAvx512(visible_row, exponentiated, max_value, sum);
  }
  for (int64_t j = exponentiated; j < whole; j += 8) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(visible_row + j), row_max));
    _mm256_storeu_ps(visible_row + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (whole < visible) {
    // Padding lanes hold -inf, whose exp is 0 and adds nothing to the sum.
    const __m256 e =
        Exp8(_mm256_sub_ps(LoadPartial(visible_row + whole, visible - whole, -INFINITY), row_max));
    StorePartial(visible_row + whole, visible - whole, e);
    sum = _mm256_add_ps(sum, e);
  }
  const __m256 inverse_sum = _mm256_set1_ps(1.0f / HorizontalSum(sum));
  for (int64_t j = 0; j < whole; j += 8) {
    _mm256_storeu_ps(visible_row + j, _mm256_mul_ps(_mm256_loadu_ps(visible_row + j), inverse_sum));
  }
  for (int64_t j = whole; j < visible; ++j)
    visible_row[j] *= _mm_cvtss_f32(_mm256_castps256_ps128(inverse_sum));
  std::fill(row + query + 1, row + key_end, 0.0f);
}

}  // namespace

void CausalAttention(const float* q, const float* k, const float* v, int64_t ld_q, int64_t ld_kv,
                     int64_t tokens, const AttentionHeads& heads, float* context,
                     std::vector<float>* scratch) {
  if (tokens <= 0) return;
  const int dim = heads.head_dim;
  const int64_t stride = (tokens + kKeyTile - 1) / kKeyTile * kKeyTile;
  const size_t needed = static_cast<size_t>((dim + kQueryRows) * stride);
  if (scratch->size() < needed) scratch->resize(needed);
  float* kt = scratch->data();                     // [dim, stride]: Kᵀ of one kv head
  float* scores = scratch->data() + dim * stride;  // [kQueryRows, stride]
  const ScoreScaling scaling{.divisor = std::sqrt(static_cast<float>(dim)),
                             .multiplier = heads.scale_multiplier,
                             .softcap = heads.softcap};
  const bool avx512 = ActiveIsa() == VectorIsa::kAvx512;
  int packed_kv = -1;
  for (int local = 0; local < heads.heads; ++local) {
    const int kv_local = (heads.first_head + local) / heads.group - heads.first_kv_head;
    if (kv_local != packed_kv) {
      PackKeysTransposed(k + kv_local * dim, ld_kv, tokens, dim, stride, kt);
      packed_kv = kv_local;
    }
    const float* q_head = q + local * dim;        // [tokens, dim], stride ld_q
    const float* v_head = v + kv_local * dim;     // [tokens, dim], stride ld_kv
    float* context_head = context + local * dim;  // [tokens, dim], stride ld_q
    for (int64_t first = 0; first < tokens; first += kQueryRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kQueryRows, tokens - first));
      const int64_t key_end = first + rows;  // the block's last query sees keys < key_end
      const float* queries[kQueryRows];
      for (int r = 0; r < kQueryRows; ++r) {
        queries[r] = q_head + (first + std::min(r, rows - 1)) * ld_q;  // repeats fill the block
      }
      const int64_t key_tiles = (key_end + kKeyTile - 1) / kKeyTile;
      if (avx512) {
        ScoreTilesAvx512(queries, kt, stride, dim, key_tiles, scores);
      } else {
        ScoreTiles(queries, kt, stride, dim, key_tiles, scores);
      }
      for (int r = 0; r < rows; ++r) {
        const int64_t query = first + r;
        const int64_t first_visible =
            heads.window > 0 ? std::max<int64_t>(0, query - heads.window + 1) : 0;
        SoftmaxCausalRow(scores + r * stride, first_visible, query, key_end, scaling, avx512);
      }
      if (avx512) {
        WeightedValuesAvx512(scores, stride, rows, key_end, v_head, ld_kv, dim,
                             context_head + first * ld_q, ld_q);
      } else {
        WeightedValues(scores, stride, rows, key_end, v_head, ld_kv, dim,
                       context_head + first * ld_q, ld_q);
      }
    }
  }
}

}  // namespace actex
