#include "sae/sae_encoder.h"

#include <algorithm>

namespace actex {

SaeEncoder::SaeEncoder(const SaeModel& sae, int64_t top_k, GemmBackend backend)
    : sae_(sae), k_(sae.activation == SaeActivation::kTopK ? sae.k : top_k), backend_(backend) {}

void SaeEncoder::EncodeTopK(const float* x, int64_t ldx, int64_t tokens, SaeLatents* latents,
                            ThreadTeam* team) {
  latents->tokens = tokens;
  latents->k = k_;
  latents->ids.resize(static_cast<size_t>(tokens * k_));
  latents->values.resize(static_cast<size_t>(tokens * k_));
  latents->counts.resize(static_cast<size_t>(tokens));
  const int members = team ? team->size() : 1;
  if (static_cast<int>(scratch_.size()) < members) scratch_.resize(static_cast<size_t>(members));
  const int64_t blocks = (tokens + kBlockTokens - 1) / kBlockTokens;
  auto encode_block = [&](int64_t block, int member) {
    const int64_t first = block * kBlockTokens;
    EncodeBlock(x, ldx, first, std::min(tokens, first + kBlockTokens), latents,
                &scratch_[static_cast<size_t>(member)]);
  };
  if (team) {
    team->Run(blocks, encode_block);
  } else {
    for (int64_t block = 0; block < blocks; ++block) encode_block(block, 0);
  }
}

void SaeEncoder::EncodeBlock(const float* x, int64_t ldx, int64_t first, int64_t end,
                             SaeLatents* latents, Scratch* scratch) const {
  const int64_t rows = end - first, d_in = sae_.d_in, d_sae = sae_.d_sae;
  scratch->product.resize(static_cast<size_t>(kBlockTokens * d_sae));
  const float* input = x + first * ldx;
  int64_t input_stride = ldx;
  if (sae_.subtract_decoder_bias) {
    // Subtracted here rather than folded into the bias (b_enc − W_enc·b_dec), which would
    // round differently from the libraries where x and b_dec nearly cancel.
    scratch->input.resize(static_cast<size_t>(kBlockTokens * d_in));
    for (int64_t row = 0; row < rows; ++row) {
      const float* source = input + row * ldx;
      float* target = scratch->input.data() + row * d_in;
      for (int64_t i = 0; i < d_in; ++i) target[i] = source[i] - sae_.decoder_bias[i];
    }
    input = scratch->input.data();
    input_stride = d_in;
  }
  // product [rows, d_sae] = input [rows, d_in] · encoder_weight [d_sae, d_in]ᵀ
  GemmOnThisThread(backend_, rows, d_sae, d_in, input, input_stride, sae_.encoder_weight.data(),
                   d_in, 0.0f, scratch->product.data(), d_sae);
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t token = first + row;
    latents->counts[token] = SelectTopLatents(
        sae_, scratch->product.data() + row * d_sae, k_, latents->ids.data() + token * k_,
        latents->values.data() + token * k_, &scratch->firing);
  }
}

}  // namespace actex
