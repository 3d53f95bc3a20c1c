#ifndef ACTEX_SAE_SAE_FOLDERS_H_
#define ACTEX_SAE_SAE_FOLDERS_H_

#include <expected>
#include <string>

#include "sae/sae_model.h"

namespace actex {

// The folders the two libraries save, each read into an SaeModel: SAELens's by
// ReadSaeLensFolder (saelens_folder.cc), sparsify's by ReadSparsifyFolder
// (sparsify_folder.cc). LoadSae (sae_loader.h) tells them apart.

// The files SAELens's SAE.save_model writes into a folder.
inline constexpr const char* kSaeLensConfigFile = "cfg.json";
inline constexpr const char* kSaeLensWeightsFile = "sae_weights.safetensors";

// Reads an SAE folder as SAELens (6.x) saves it: cfg.json (`architecture`, `d_in`, `d_sae`,
// `apply_b_dec_to_input`, `normalize_activations`, `reshape_activations`,
// `metadata.hook_name` — or a top-level `hook_name` as SAELens 5 wrote it — and for topk
// `k` and `rescale_acts_by_decoder_norm`) and sae_weights.safetensors (W_enc [d_in, d_sae],
// b_enc [d_sae], b_dec [d_in], threshold [d_sae] for jumprelu, W_dec [d_sae, d_in] when
// the topk pre-activations are rescaled by its row norms).
// Refused, naming the file and the field: an architecture other than standard, jumprelu
// and topk; a normalize_activations other than "none" (the others change each token's
// input at run time, or must first be folded into the weights by SAELens's
// fold_activation_norm_scaling_factor / fold_activation_whitening); an unknown
// reshape_activations; a missing or mistyped field; a weight of another shape.
std::expected<SaeModel, std::string> ReadSaeLensFolder(const std::string& dir);

// The files EleutherAI sparsify's SparseCoder.save_to_disk writes into a folder; its
// trainer names that folder after the hookpoint ("layers.5").
inline constexpr const char* kSparsifyConfigFile = "cfg.json";
inline constexpr const char* kSparsifyWeightsFile = "sae.safetensors";

// Reads one hookpoint's folder as sparsify saves it: cfg.json (`d_in`, `k`, `num_latents`
// or else d_in × `expansion_factor`, `activation`, `transcode`, `skip_connection`) and
// sae.safetensors (encoder.weight [num_latents, d_in], encoder.bias [num_latents], b_dec
// [d_in]). The encoding is sparsify's SparseCoder.encode: the top k of
// relu((x − b_dec) · encoder.weightᵀ + encoder.bias). The site is the folder's name read
// as a hookpoint (SiteOfSparsifyHookpoint).
// Refused, naming the file and the field: activation "groupmax", a transcoder
// (`transcode`: its input is another module's), a skip connection (`skip_connection`),
// a hookpoint with no actex site, a missing or mistyped field, a weight of another shape.
std::expected<SaeModel, std::string> ReadSparsifyFolder(const std::string& dir);

}  // namespace actex

#endif  // ACTEX_SAE_SAE_FOLDERS_H_
