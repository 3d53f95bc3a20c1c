#ifndef ACTEX_SAE_SAE_MODEL_H_
#define ACTEX_SAE_SAE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace actex {

// The library that saved an SAE folder.
enum class SaeFormat {
  kSaeLens,   // cfg.json + sae_weights.safetensors (SAE.save_model)
  kSparsify,  // cfg.json + sae.safetensors, in a folder named by its hookpoint (EleutherAI)
};

// How an SAE turns its pre-activations into latents.
enum class SaeActivation {
  kRelu,      // SAELens "standard": max(pre, 0)
  kJumpRelu,  // SAELens "jumprelu": pre where pre > threshold (and > 0), else 0
  kTopK,      // SAELens "topk", sparsify "topk": the k largest pre, then max(·, 0)
};

const char* SaeFormatName(SaeFormat format);
const char* SaeActivationName(SaeActivation activation);

// A trained SAE's encoder, one struct for both libraries. For a token's activations x
// [d_in] both compute
//   pre = (x − b_dec if subtract_decoder_bias) · W_enc + b_enc      [d_sae]
//   pre = pre · latent_scale (element-wise; SAELens topk with rescale_acts_by_decoder_norm)
// and then the activation. The decoder itself is not kept: encoding never needs it.
struct SaeModel {
  std::string dir;  // the folder it was read from, for messages
  SaeFormat format = SaeFormat::kSaeLens;
  SaeActivation activation = SaeActivation::kRelu;
  int64_t d_in = 0;
  int64_t d_sae = 0;
  // [d_sae, d_in] float32, one row per latent: SAELens's W_enc [d_in, d_sae] transposed,
  // sparsify's encoder.weight as it is; the layout GemmOnThisThread multiplies by.
  std::vector<float> encoder_weight;
  std::vector<float> encoder_bias;  // [d_sae]
  std::vector<float> decoder_bias;  // [d_in]
  bool subtract_decoder_bias = true;
  std::vector<float> threshold;     // [d_sae] for kJumpRelu, else empty
  std::vector<float> latent_scale;  // [d_sae] or empty (no scaling)
  int64_t k = 0;                    // for kTopK: the latents each token keeps
  // The actex site the SAE was trained on ("blocks.5.hook_resid_post"), and where that
  // came from in the library's own words, for messages: `metadata.hook_name
  // "blocks.5.hook_resid_post" in DIR/cfg.json`, `sparsify hookpoint "layers.5" (the
  // folder's name)`.
  std::string site;
  std::string site_source;
};

}  // namespace actex

#endif  // ACTEX_SAE_SAE_MODEL_H_
