#ifndef ACTEX_ACTORS_SAE_PLAN_H_
#define ACTEX_ACTORS_SAE_PLAN_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/sites.h"
#include "sae/sae_model.h"
#include "storage/sae_record.h"

namespace actex {

// One `--sae SITE=DIR` of a run: the site whose activations it encodes and the SAE.
struct PlannedSae {
  Site site;
  std::string dir;  // as given
  // Loaded by LoadPlannedSaes (the node, before any actor starts); null until then.
  std::shared_ptr<const SaeModel> model{};
  int64_t k = 0;       // latents kept per token: --sae-top-k, or a TopK SAE's own k
  SaeRecord record{};  // what metadata.json records of it, digests included
};

// Splits "SITE=DIR" at its first '='; an entry without one, or with an empty side, is
// an error saying what is expected.
std::expected<std::pair<std::string, std::string>, std::string> SplitSaeEntry(
    const std::string& entry);

// Resolves each "SITE=DIR" of --sae against the model: SITE is a full hook name or a
// short form that names one site at `layers` ("resid_post" with --layers 5). Refused,
// naming the entry: a site the model lacks, a short form naming several sites, an
// integer site (expert ids), two SAEs on one site. Nothing is read from DIR yet.
std::expected<std::vector<PlannedSae>, std::string> PlanSaes(
    const std::vector<std::string>& entries, const std::vector<int>& layers,
    const ModelConfig& config);

// Reads each planned SAE's folder (sae/sae_loader.h), checks it against its site
// (CheckSaeMatchesSite: the SAE's hook name and d_in; a layer-10 SAE on layer 12 is
// refused naming both), sets its K (`top_k`, at most its d_sae: a token has no more
// latents than that, unless it is a TopK SAE, which keeps its own k) and its record
// with the SHA-256 of its files, and checks the memory the writer's latent examples
// will take (`examples` per latent, ShardExamples::CheckMemory). Errors start with
// "--sae SITE=DIR", or name --sae-examples.
std::expected<void, std::string> LoadPlannedSaes(std::vector<PlannedSae>& saes, int64_t top_k,
                                                 int64_t examples, const ModelConfig& config);

// The SAEs as every host of a job must have them, for the run fingerprint: per SAE its
// site, K and files' digests ("none" without --sae). Folders may differ between hosts.
std::string SaeFingerprint(const std::vector<PlannedSae>& saes);

}  // namespace actex

#endif  // ACTEX_ACTORS_SAE_PLAN_H_
