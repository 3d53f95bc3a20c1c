#include "model/kernels/attention.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "model/kernels/vector_exp.h"

namespace actex {
namespace {

// Queries per block: the waste above the causal diagonal is at most half a block of
// keys per query, and the block's scores ([block, tokens]) stay small.
constexpr int64_t kQueryBlock = 128;

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

// Turns row `query` of raw scores (keys [0, key_end)) into probabilities, leaving
// zeros for the keys the causal mask hides (those HF sets to finfo.min, whose exp
// is 0). As HF: scores / sqrt(head_dim), then exp(s - max) / sum in float32.
void SoftmaxCausalRow(float* row, int64_t query, int64_t key_end, float scale_divisor) {
  const int64_t visible = query + 1;
  const int64_t whole = visible - visible % 8;
  const __m256 divisor = _mm256_set1_ps(scale_divisor);
  __m256 maximum = _mm256_set1_ps(-INFINITY);
  for (int64_t j = 0; j < whole; j += 8) {
    const __m256 scaled = _mm256_div_ps(_mm256_loadu_ps(row + j), divisor);
    _mm256_storeu_ps(row + j, scaled);
    maximum = _mm256_max_ps(maximum, scaled);
  }
  if (whole < visible) {
    const __m256 scaled =
        _mm256_div_ps(LoadPartial(row + whole, visible - whole, -INFINITY), divisor);
    StorePartial(row + whole, visible - whole, scaled);
    maximum = _mm256_max_ps(maximum, scaled);
  }
  const __m256 row_max = _mm256_set1_ps(HorizontalMax(maximum));

  __m256 sum = _mm256_setzero_ps();
  for (int64_t j = 0; j < whole; j += 8) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), row_max));
    _mm256_storeu_ps(row + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (whole < visible) {
    // Padding lanes hold -inf, whose exp is 0 and adds nothing to the sum.
    const __m256 e =
        Exp8(_mm256_sub_ps(LoadPartial(row + whole, visible - whole, -INFINITY), row_max));
    StorePartial(row + whole, visible - whole, e);
    sum = _mm256_add_ps(sum, e);
  }
  const __m256 inverse_sum = _mm256_set1_ps(1.0f / HorizontalSum(sum));
  for (int64_t j = 0; j < whole; j += 8) {
    _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inverse_sum));
  }
  for (int64_t j = whole; j < visible; ++j)
    row[j] *= _mm_cvtss_f32(_mm256_castps256_ps128(inverse_sum));
  std::fill(row + visible, row + key_end, 0.0f);
}

}  // namespace

void CausalAttention(const float* q, const float* k, const float* v, int64_t ld_q, int64_t ld_kv,
                     int64_t tokens, const AttentionHeads& heads, float* context,
                     std::vector<float>* scores) {
  if (tokens <= 0) return;
  const int64_t block = std::min(tokens, kQueryBlock);
  if (static_cast<int64_t>(scores->size()) < block * tokens) {
    scores->resize(static_cast<size_t>(block * tokens));
  }
  const float scale_divisor = std::sqrt(static_cast<float>(heads.head_dim));
  const int64_t dim = heads.head_dim;
  for (int local = 0; local < heads.heads; ++local) {
    const int kv_local = (heads.first_head + local) / heads.group - heads.first_kv_head;
    const float* q_head = q + local * dim;        // [tokens, dim], stride ld_q
    const float* k_head = k + kv_local * dim;     // [tokens, dim], stride ld_kv
    const float* v_head = v + kv_local * dim;     // [tokens, dim], stride ld_kv
    float* context_head = context + local * dim;  // [tokens, dim], stride ld_q
    for (int64_t first = 0; first < tokens; first += block) {
      const int64_t rows = std::min(block, tokens - first);
      const int64_t key_end = first + rows;  // the last query of the block sees keys < key_end
      float* block_scores = scores->data();  // [rows, key_end]
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(rows),
                  static_cast<blasint>(key_end), static_cast<blasint>(dim), 1.0f,
                  q_head + first * ld_q, static_cast<blasint>(ld_q), k_head,
                  static_cast<blasint>(ld_kv), 0.0f, block_scores, static_cast<blasint>(key_end));
      for (int64_t r = 0; r < rows; ++r) {
        SoftmaxCausalRow(block_scores + r * key_end, first + r, key_end, scale_divisor);
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(rows),
                  static_cast<blasint>(dim), static_cast<blasint>(key_end), 1.0f, block_scores,
                  static_cast<blasint>(key_end), v_head, static_cast<blasint>(ld_kv), 0.0f,
                  context_head + first * ld_q, static_cast<blasint>(ld_q));
    }
  }
}

}  // namespace actex
