#ifndef ACTEX_SAE_LATENT_SELECTION_H_
#define ACTEX_SAE_LATENT_SELECTION_H_

#include <cstdint>
#include <vector>

#include "sae/sae_model.h"

namespace actex {

// A firing latent of one token.
struct LatentCandidate {
  float value;
  int32_t id;
};

// The id a row of latents is padded with where a token has fewer than K firing latents
// (its value is 0).
inline constexpr int32_t kNoLatent = -1;

// One token's latents from its product row `row` [d_sae] = (x − b_dec)·W_encᵀ, without
// the encoder bias: adds b_enc, scales by latent_scale, applies `sae`'s activation
// (overwriting `row` with the activations, 0 where a latent does not fire), and writes
// the `top_k` largest activations to `ids` and `values` [top_k] in descending order
// (equal values: the smaller id first), padded with kNoLatent and 0 where fewer fire.
// Returns how many latents are non-zero before the cut to top_k (for a TopK SAE, at most
// its k). `scratch` is reused between calls.
int32_t SelectTopLatents(const SaeModel& sae, float* row, int64_t top_k, int32_t* ids,
                         float* values, std::vector<LatentCandidate>* scratch);

}  // namespace actex

#endif  // ACTEX_SAE_LATENT_SELECTION_H_
