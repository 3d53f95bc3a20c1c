#ifndef ACTEX_SAE_SPARSIFY_FOLDER_H_
#define ACTEX_SAE_SPARSIFY_FOLDER_H_

#include <expected>
#include <string>

#include "sae/sae_model.h"

namespace actex {

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

#endif  // ACTEX_SAE_SPARSIFY_FOLDER_H_
