#include "sae/sae_site.h"

#include <regex>

namespace actex {

std::expected<std::string, std::string> SiteOfSparsifyHookpoint(std::string_view hookpoint) {
  static const std::regex kLayerOutput(R"((?:model\.|transformer\.)?(?:layers|h)\.(\d+))");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_match(hookpoint.begin(), hookpoint.end(), match, kLayerOutput)) {
    return std::unexpected(std::string("sparsify hookpoint \"") + std::string(hookpoint) +
                           "\" has no actex site: actex knows the output of a decoder layer, "
                           "\"layers.N\" (GPT-2: \"h.N\"), which is blocks.N.hook_resid_post");
  }
  return std::string("blocks.") + match[1].str() + ".hook_resid_post";
}

std::expected<void, std::string> CheckSaeMatchesSite(const SaeModel& sae, std::string_view site,
                                                     int64_t site_width) {
  if (sae.site != site) {
    return std::unexpected(std::string("the SAE in ") + sae.dir + " was trained on " + sae.site +
                           " (" + sae.site_source + "), not on " + std::string(site) +
                           ": give the SAE of that site, or the site the SAE was trained on");
  }
  if (sae.d_in != site_width) {
    return std::unexpected(std::string("the SAE in ") + sae.dir + " has d_in " +
                           std::to_string(sae.d_in) + ", but site " + std::string(site) + " is " +
                           std::to_string(site_width) +
                           " wide in this model: it was trained on another model");
  }
  return {};
}

}  // namespace actex
