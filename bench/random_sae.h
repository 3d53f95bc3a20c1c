#ifndef ACTEX_BENCH_RANDOM_SAE_H_
#define ACTEX_BENCH_RANDOM_SAE_H_

#include <cstdint>
#include <expected>
#include <string>

namespace actex {

// A SAELens folder (cfg.json + sae_weights.safetensors, architecture "standard") of
// `d_in` -> `d_sae` latents on `site`, with random zero-mean weights and biases, so that
// about half the latents fire on each token (the latent selection's worst case). Written
// with the storage safetensors writer, unless DIR already holds one this function
// completed (a `.bench-complete` marker, so an interrupted write is redone).
std::expected<void, std::string> EnsureRandomSae(const std::string& dir, const std::string& site,
                                                 int64_t d_in, int64_t d_sae);

}  // namespace actex

#endif  // ACTEX_BENCH_RANDOM_SAE_H_
