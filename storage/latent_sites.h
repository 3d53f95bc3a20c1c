#ifndef ACTEX_STORAGE_LATENT_SITES_H_
#define ACTEX_STORAGE_LATENT_SITES_H_

// The stored sites an SAE's latents at a site become, and the rules their rows obey.
// For an SAE on site S (its hook name) every shard holds
//   S.latents.ids     [tokens, K] I32: latent ids, strongest first, -1 where fewer fire
//   S.latents.values  [tokens, K] in the output's float dtype: their activations, descending
//   S.latents.count   [tokens, 1] I32: latents non-zero before the cut to K
// The device shard writes them (actors/device_shard_actor.h) and `actex verify` checks
// them (CheckLatentRow).

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sae_record.h"
#include "storage/safetensors.h"
#include "storage/stored_site.h"

namespace actex {

// The id of a padding entry: fewer than K latents fired on the token.
inline constexpr int32_t kPaddingLatent = -1;

struct LatentSiteNames {
  std::string ids, values, count;
};

// The three tensor names of the latents of an SAE on `site`.
LatentSiteNames LatentSiteNamesOf(std::string_view site);

// The three stored sites, in the order they are written: ids, values, count.
std::vector<StoredSite> StoredLatentSites(std::string_view site, int k);

// Element `index` of a float tensor in any of the output's dtypes (F32, F16, BF16), as
// float32: a latent value as the shard stores it.
float FloatAt(const SafetensorsTensor& tensor, int64_t index);

// One token's latents, as read back from a shard: ids [K], values [K] (as float32),
// `count` = the count tensor's entry. Empty when the row obeys the rules, else what
// breaks them: an id outside [0, d_sae) or -1; a padding entry (-1) before a latent or
// with a value other than 0; values that rise; a negative count; a count of at most K
// that is not the number of entries used, or a count above K with padding.
std::string CheckLatentRow(std::span<const int32_t> ids, std::span<const float> values,
                           int32_t count, int64_t d_sae);

// Every row of the latents of `sae` in a shard's tensors (as SafetensorsFile maps them,
// their layout already checked): the first row that breaks CheckLatentRow's rules as
// "site S latents: row R (doc D, position P): WHAT", or empty. A shard without the
// SAE's tensors (the layout check names them) is not looked at.
std::string CheckShardLatents(const std::map<std::string, SafetensorsTensor>& tensors,
                              const SaeRecord& sae);

}  // namespace actex

#endif  // ACTEX_STORAGE_LATENT_SITES_H_
