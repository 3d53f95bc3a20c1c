#include "sae/latent_selection.h"

#include <immintrin.h>

#include <algorithm>

namespace actex {
namespace {

// Larger values first; among equal values the smaller id, so the order is total and the
// same on every machine.
bool Stronger(const LatentCandidate& a, const LatentCandidate& b) {
  return a.value > b.value || (a.value == b.value && a.id < b.id);
}

// Floats per AVX2 vector (every build targets x86-64-v3).
constexpr int kLanes = 8;

// Turns `row` [d_sae] from x·W_encᵀ into the activations in place — pre = (row + b_enc)
// · latent_scale, kept where it fires (pre > 0, and pre > threshold for JumpReLU), else
// 0 — and returns how many fire. The bias is added before the scale, as both libraries
// do. A TopK SAE's own cut to k is left to the caller.
int64_t Activate(const SaeModel& sae, float* row) {
  const float* bias = sae.encoder_bias.data();
  const float* scale = sae.latent_scale.empty() ? nullptr : sae.latent_scale.data();
  const float* threshold = sae.threshold.empty() ? nullptr : sae.threshold.data();
  const int64_t d_sae = sae.d_sae;
  auto activate = [&](int64_t i) {
    float pre = row[i] + bias[i];
    if (scale) pre *= scale[i];
    const bool fires = pre > 0.0f && (!threshold || pre > threshold[i]);
    row[i] = fires ? pre : 0.0f;
    return fires ? 1 : 0;
  };
  int64_t firing = 0, i = 0;
  const __m256 zero = _mm256_setzero_ps();
  for (; i + kLanes <= d_sae; i += kLanes) {
    __m256 pre = _mm256_add_ps(_mm256_loadu_ps(row + i), _mm256_loadu_ps(bias + i));
    if (scale) pre = _mm256_mul_ps(pre, _mm256_loadu_ps(scale + i));
    __m256 fires = _mm256_cmp_ps(pre, zero, _CMP_GT_OQ);
    if (threshold) {
      fires = _mm256_and_ps(fires, _mm256_cmp_ps(pre, _mm256_loadu_ps(threshold + i), _CMP_GT_OQ));
    }
    _mm256_storeu_ps(row + i, _mm256_and_ps(pre, fires));
    firing += __builtin_popcount(_mm256_movemask_ps(fires));
  }
  for (; i < d_sae; ++i) firing += activate(i);
  return firing;
}

// The `kept` strongest of the activations in `row` [d_sae] (0 = not firing) into
// `strongest`, in descending order. One pass with a heap of `kept` whose weakest member is
// the bar a latent must pass: in a random order only about kept·ln(d_sae/kept) latents
// ever enter, and eight lanes at a time are checked against the bar. Latents arrive in
// id order, so of equal values the smaller id is kept without comparing ids.
void KeepStrongest(const float* row, int64_t d_sae, int64_t kept,
                   std::vector<LatentCandidate>* strongest) {
  std::vector<LatentCandidate>& heap = *strongest;  // its front: the weakest kept
  heap.clear();
  if (kept == 0) return;
  float bar = 0.0f;
  auto offer = [&](int64_t i) {
    if (!(row[i] > bar)) return;
    if (static_cast<int64_t>(heap.size()) == kept) {
      std::pop_heap(heap.begin(), heap.end(), Stronger);
      heap.back() = {row[i], static_cast<int32_t>(i)};
    } else {
      heap.push_back({row[i], static_cast<int32_t>(i)});
    }
    std::push_heap(heap.begin(), heap.end(), Stronger);
    if (static_cast<int64_t>(heap.size()) == kept) bar = heap.front().value;
  };
  int64_t i = 0;
  for (; i + kLanes <= d_sae; i += kLanes) {
    const __m256 above = _mm256_cmp_ps(_mm256_loadu_ps(row + i), _mm256_set1_ps(bar), _CMP_GT_OQ);
    for (int mask = _mm256_movemask_ps(above); mask != 0; mask &= mask - 1) {
      offer(i + __builtin_ctz(mask));
    }
  }
  for (; i < d_sae; ++i) offer(i);
  std::sort(heap.begin(), heap.end(), Stronger);
}

}  // namespace

int32_t SelectTopLatents(const SaeModel& sae, float* row, int64_t top_k, int32_t* ids,
                         float* values, std::vector<LatentCandidate>* scratch) {
  int64_t count = Activate(sae, row);
  // A TopK SAE keeps its k largest pre-activations and zeroes the negative ones among
  // them: the positive ones of its k largest, i.e. the min(k, firing) largest that fire.
  if (sae.activation == SaeActivation::kTopK) count = std::min(count, sae.k);
  const int64_t kept = std::min(count, top_k);
  KeepStrongest(row, sae.d_sae, kept, scratch);
  for (int64_t j = 0; j < kept; ++j) {
    ids[j] = (*scratch)[j].id;
    values[j] = (*scratch)[j].value;
  }
  std::fill(ids + kept, ids + top_k, kNoLatent);
  std::fill(values + kept, values + top_k, 0.0f);
  return static_cast<int32_t>(count);
}

}  // namespace actex
