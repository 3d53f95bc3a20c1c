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
  kEmbed,     // hook_embed                       [tokens, hidden]
  kResidPre,  // blocks.{L}.hook_resid_pre        [tokens, hidden]
  kZ,         // blocks.{L}.attn.hook_z           [tokens, heads*head_dim], head-major
  kAttnOut,   // blocks.{L}.hook_attn_out         [tokens, hidden]
  kResidMid,  // blocks.{L}.hook_resid_mid        [tokens, hidden]
  // Mixture-of-experts layers only (ModelConfig::IsSparse):
  kRouterLogits,   // blocks.{L}.mlp.hook_router_logits   [tokens, experts], the router's output
  kExpertIds,      // blocks.{L}.mlp.hook_expert_indices  [tokens, top_k] I32, in HF's order
  kExpertWeights,  // blocks.{L}.mlp.hook_routing_weights [tokens, top_k], the experts' multipliers
  kMlpPost,        // blocks.{L}.mlp.hook_post         [tokens, intermediate], dense layers only
  kMlpOut,         // blocks.{L}.hook_mlp_out          [tokens, hidden]
  kResidPost,      // blocks.{L}.hook_resid_post       [tokens, hidden]
  kLnFinal,        // ln_final.hook_normalized         [tokens, hidden]
};
inline constexpr int kSiteKindCount = static_cast<int>(SiteKind::kLnFinal) + 1;

struct Site {
  SiteKind kind;
  int layer = -1;  // -1 for kEmbed and kLnFinal

  std::string HookName() const;  // e.g. "blocks.20.hook_resid_post"
  int Width(const ModelConfig& config) const;
  // Integer sites (expert_ids) are stored as I32 whatever the output dtype; the others
  // are float32 activations stored in it.
  bool IsInteger() const { return kind == SiteKind::kExpertIds; }
  // Whether `config` has this site: routing sites only on its mixture-of-experts layers,
  // mlp_post only on dense ones.
  bool ExistsIn(const ModelConfig& config) const;
  // The deepest decoder layer that must run for this site (-1: none, kLnFinal: all).
  int LastLayerNeeded(const ModelConfig& config) const;
  bool operator==(const Site&) const = default;
};

// Parses `--sites` entries (full hook names or the short forms resid_pre, z, attn_out,
// resid_mid, router_logits, expert_ids, expert_weights, mlp_post, mlp_out, resid_post
// taken at every entry of `layers` that has them, and embed, ln_final) against `config`.
// The result has no duplicates and is ordered by where each site occurs in the forward
// pass. Errors name the bad entry: a layer out of range, a full name the layer does not
// have (a routing site on a dense layer, mlp_post on a mixture of experts), a routing
// site on a dense family, a short form none of `layers` has.
std::expected<std::vector<Site>, std::string> ParseSites(const std::vector<std::string>& entries,
                                                         const std::vector<int>& layers,
                                                         const ModelConfig& config);

}  // namespace actex

#endif  // ACTEX_MODEL_SITES_H_
