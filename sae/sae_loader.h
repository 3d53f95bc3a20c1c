#ifndef ACTEX_SAE_SAE_LOADER_H_
#define ACTEX_SAE_SAE_LOADER_H_

#include <expected>
#include <string>

#include "sae/sae_model.h"

namespace actex {

// Reads the trained SAE in folder `dir`, telling the library that saved it by its weights
// file: sae_weights.safetensors is SAELens's (ReadSaeLensFolder), sae.safetensors is
// sparsify's (ReadSparsifyFolder). A folder holding neither is an error that says what
// was expected; a sparsify run folder (one subfolder per hookpoint) is an error naming
// the hookpoints found, so the user can pick one.
std::expected<SaeModel, std::string> LoadSae(const std::string& dir);

}  // namespace actex

#endif  // ACTEX_SAE_SAE_LOADER_H_
