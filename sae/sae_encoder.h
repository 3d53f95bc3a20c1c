#ifndef ACTEX_SAE_SAE_ENCODER_H_
#define ACTEX_SAE_SAE_ENCODER_H_

#include <cstdint>
#include <vector>

#include "model/kernels/gemm.h"
#include "model/kernels/thread_team.h"
#include "sae/latent_selection.h"
#include "sae/sae_model.h"

namespace actex {

// A batch's latents at one site, K per token.
struct SaeLatents {
  int64_t tokens = 0;
  int64_t k = 0;
  std::vector<int32_t> ids;     // [tokens, k]: latent ids, kNoLatent where fewer fire
  std::vector<float> values;    // [tokens, k]: their activations, descending per token
  std::vector<int32_t> counts;  // [tokens]: latents non-zero before the cut to k
};

// Encodes activations with a trained SAE in float32, as its library does, keeping each
// token's K strongest latents. The product x·W_encᵀ is one sgemm per block of tokens
// (GemmOnThisThread); each block's pre-activations [block, d_sae] live only in a per-thread
// buffer, so memory stays bounded whatever the batch (kBlockTokens × d_sae floats per
// thread: 7.3 MB for 16 × 896 latents).
class SaeEncoder {
 public:
  // Tokens encoded per product: enough rows that the sgemm runs at its rate (each call
  // streams the whole encoder), few enough that the buffer stays in a few MB.
  static constexpr int64_t kBlockTokens = 128;

  // `sae` must outlive the encoder. K is `top_k` (>= 1), except for a TopK SAE, which
  // keeps its own k.
  SaeEncoder(const SaeModel& sae, int64_t top_k,
             GemmBackend backend = PreferredGemmBackend(ActiveIsa()));

  int64_t k() const { return k_; }

  // Encodes x [tokens, d_in] (row stride ldx >= d_in) into `latents` (resized). With a
  // `team`, blocks of tokens are spread over its members, each a 1-thread product (hold
  // OpenBLAS at one thread, SetBlasThreads(1), as the forward pass does); without one,
  // everything runs on the caller. The result is the same either way.
  void EncodeTopK(const float* x, int64_t ldx, int64_t tokens, SaeLatents* latents,
                  ThreadTeam* team = nullptr);

 private:
  // One thread's buffers, reused across blocks and batches.
  struct Scratch {
    std::vector<float> input;    // [kBlockTokens, d_in]: x − b_dec
    std::vector<float> product;  // [kBlockTokens, d_sae]
    std::vector<LatentCandidate> firing;
  };

  // Encodes tokens [first, end) (at most kBlockTokens) with `scratch`.
  void EncodeBlock(const float* x, int64_t ldx, int64_t first, int64_t end, SaeLatents* latents,
                   Scratch* scratch) const;

  const SaeModel& sae_;
  int64_t k_;
  GemmBackend backend_;
  std::vector<Scratch> scratch_;  // one per team member
};

}  // namespace actex

#endif  // ACTEX_SAE_SAE_ENCODER_H_
