#ifndef ACTEX_SAE_SAE_SITE_H_
#define ACTEX_SAE_SAE_SITE_H_

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "sae/sae_model.h"

namespace actex {

// The actex site of a sparsify hookpoint: sparsify hooks the output of a module of the
// HF base model, and the output of decoder layer N ("layers.N"; GPT-2's "h.N"; either
// under "model." or "transformer.") is blocks.N.hook_resid_post. Other hookpoints (a
// layer's self_attn or mlp, whose outputs differ from actex's sites in some families)
// are an error listing the forms understood.
std::expected<std::string, std::string> SiteOfSparsifyHookpoint(std::string_view hookpoint);

// Whether `sae` may encode site `site` (a full hook name, "blocks.12.hook_resid_post")
// whose rows are `site_width` wide. Refused, naming the SAE's folder: a d_in other than
// the width, and a site other than the one the SAE was trained on, naming both (a
// layer-10 SAE on layer 12 encodes without complaint and means nothing).
std::expected<void, std::string> CheckSaeMatchesSite(const SaeModel& sae, std::string_view site,
                                                     int64_t site_width);

}  // namespace actex

#endif  // ACTEX_SAE_SAE_SITE_H_
