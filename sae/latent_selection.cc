#include "sae/latent_selection.h"

#include <algorithm>

namespace actex {
namespace {

// Larger values first; among equal values the smaller id, so the order is total and the
// same on every machine.
bool Stronger(const LatentCandidate& a, const LatentCandidate& b) {
  return a.value > b.value || (a.value == b.value && a.id < b.id);
}

// Appends every latent whose activation is non-zero to `firing`. The encoder bias is added
// before the scale, as both libraries do (pre = x·W + b, then pre · scale).
void CollectFiring(const SaeModel& sae, const float* product,
                   std::vector<LatentCandidate>* firing) {
  const float* bias = sae.encoder_bias.data();
  const int32_t d_sae = static_cast<int32_t>(sae.d_sae);
  firing->clear();
  if (!sae.latent_scale.empty()) {
    const float* scale = sae.latent_scale.data();
    for (int32_t i = 0; i < d_sae; ++i) {
      const float pre = (product[i] + bias[i]) * scale[i];
      if (pre > 0.0f) firing->push_back({pre, i});
    }
  } else if (sae.activation == SaeActivation::kJumpRelu) {
    const float* threshold = sae.threshold.data();
    for (int32_t i = 0; i < d_sae; ++i) {
      const float pre = product[i] + bias[i];
      if (pre > 0.0f && pre > threshold[i]) firing->push_back({pre, i});
    }
  } else {
    for (int32_t i = 0; i < d_sae; ++i) {
      const float pre = product[i] + bias[i];
      if (pre > 0.0f) firing->push_back({pre, i});
    }
  }
}

}  // namespace

int32_t SelectTopLatents(const SaeModel& sae, const float* product, int64_t top_k, int32_t* ids,
                         float* values, std::vector<LatentCandidate>* scratch) {
  std::vector<LatentCandidate>& firing = *scratch;
  firing.reserve(static_cast<size_t>(sae.d_sae));
  CollectFiring(sae, product, &firing);
  // A TopK SAE keeps its k largest pre-activations and zeroes the negative ones among
  // them: the positive ones of its k largest, i.e. the min(k, firing) largest that fire.
  int64_t count = static_cast<int64_t>(firing.size());
  if (sae.activation == SaeActivation::kTopK) count = std::min(count, sae.k);
  const int64_t kept = std::min(count, top_k);
  if (kept < static_cast<int64_t>(firing.size())) {
    std::nth_element(firing.begin(), firing.begin() + kept, firing.end(), Stronger);
  }
  std::sort(firing.begin(), firing.begin() + kept, Stronger);
  for (int64_t j = 0; j < kept; ++j) {
    ids[j] = firing[j].id;
    values[j] = firing[j].value;
  }
  std::fill(ids + kept, ids + top_k, kNoLatent);
  std::fill(values + kept, values + top_k, 0.0f);
  return static_cast<int32_t>(count);
}

}  // namespace actex
