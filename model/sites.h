#ifndef ACTEX_MODEL_SITES_H_
#define ACTEX_MODEL_SITES_H_

#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace actex {

struct ModelConfig;

// A place in the forward pass whose activations are captured. Names follow
// TransformerLens hook names, which SAE researchers already use.
enum class SiteKind {
  kEmbed,      // hook_embed                       [tokens, hidden]
  kResidPre,   // blocks.{L}.hook_resid_pre        [tokens, hidden]
  kZ,          // blocks.{L}.attn.hook_z           [tokens, heads*head_dim], head-major
  kAttnOut,    // blocks.{L}.hook_attn_out         [tokens, hidden]
  kResidMid,   // blocks.{L}.hook_resid_mid        [tokens, hidden]
  kMlpPost,    // blocks.{L}.mlp.hook_post         [tokens, intermediate]
  kMlpOut,     // blocks.{L}.hook_mlp_out          [tokens, hidden]
  kResidPost,  // blocks.{L}.hook_resid_post       [tokens, hidden]
  kLnFinal,    // ln_final.hook_normalized         [tokens, hidden]
};

struct Site {
  SiteKind kind;
  int layer = -1;  // -1 for kEmbed and kLnFinal

  std::string HookName() const;  // e.g. "blocks.20.hook_resid_post"
  int Width(const ModelConfig& config) const;
  // The deepest decoder layer that must run for this site (-1: none, kLnFinal: all).
  int LastLayerNeeded(const ModelConfig& config) const;
  bool operator==(const Site&) const = default;
};

// Parses `--sites` entries (full hook names or the short forms resid_pre, resid_mid,
// resid_post, z, attn_out, mlp_out, mlp_post taken at every entry of `layers`, and embed,
// ln_final) against a model with `num_layers` layers. The result has no duplicates and
// is ordered by where each site occurs in the forward pass. Errors name the bad entry.
std::expected<std::vector<Site>, std::string> ParseSites(const std::vector<std::string>& entries,
                                                         const std::vector<int>& layers,
                                                         int num_layers);

}  // namespace actex

#endif  // ACTEX_MODEL_SITES_H_
