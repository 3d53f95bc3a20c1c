#include "storage/latent_sites.h"

namespace actex {

LatentSiteNames LatentSiteNamesOf(std::string_view site) {
  const std::string prefix = std::string(site) + ".latents.";
  return {prefix + "ids", prefix + "values", prefix + "count"};
}

std::vector<StoredSite> StoredLatentSites(std::string_view site, int k) {
  LatentSiteNames names = LatentSiteNamesOf(site);
  return {{std::move(names.ids), k, /*integer=*/true},
          {std::move(names.values), k, /*integer=*/false},
          {std::move(names.count), 1, /*integer=*/true}};
}

std::string CheckLatentRow(std::span<const int32_t> ids, std::span<const float> values,
                           int32_t count, int64_t d_sae) {
  const int64_t k = static_cast<int64_t>(ids.size());
  if (count < 0) return "count is " + std::to_string(count) + ", below 0";
  int64_t used = 0;
  while (used < k && ids[used] != kPaddingLatent) ++used;
  for (int64_t i = 0; i < k; ++i) {
    const std::string entry = "entry " + std::to_string(i);
    if (i < used && (ids[i] < 0 || ids[i] >= d_sae)) {
      return entry + ": id " + std::to_string(ids[i]) + " is outside [0, " + std::to_string(d_sae) +
             ")";
    }
    if (i >= used && ids[i] != kPaddingLatent) {
      return entry + ": id " + std::to_string(ids[i]) + " after the padding (-1) of entry " +
             std::to_string(used);
    }
    if (i >= used && values[i] != 0) {
      return entry + ": padding (-1) with value " + std::to_string(values[i]) + ", expected 0";
    }
    if (i > 0 && i < used && values[i] > values[i - 1]) {
      return entry + ": value " + std::to_string(values[i]) + " above the " +
             std::to_string(values[i - 1]) + " before it (values must descend)";
    }
  }
  if (count <= k && used != count) {
    return "count is " + std::to_string(count) + " but " + std::to_string(used) +
           " entries are latents";
  }
  if (count > k && used != k) {
    return "count is " + std::to_string(count) + ", above K " + std::to_string(k) + ", but only " +
           std::to_string(used) + " entries are latents";
  }
  return "";
}

}  // namespace actex
