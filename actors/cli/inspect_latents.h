#ifndef ACTEX_ACTORS_CLI_INSPECT_LATENTS_H_
#define ACTEX_ACTORS_CLI_INSPECT_LATENTS_H_

#include <filesystem>
#include <string>
#include <vector>

namespace actex {

// `actex inspect --latents OUT`: merges the latent examples of every shard of `hosts`
// (storage/job_latents.h) into OUT/latents.safetensors (`out_dir`), then prints per SAE
// its latents, how many fired and how many never did (dead), and the densest ones with
// their mean value and strongest example. Returns the exit status: 0, or 2 (after
// logging why) when a file could not be read or written, or no shard has examples.
int InspectLatents(const std::string& out_dir, const std::vector<std::filesystem::path>& hosts);

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_INSPECT_LATENTS_H_
