#include "model/sites.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "model/model_config.h"

namespace actex {
namespace {

struct PerLayerName {
  SiteKind kind;
  std::string_view short_name;   // as given to --sites
  std::string_view hook_suffix;  // after "blocks.{L}."
};

// In the order each site occurs inside a decoder layer.
constexpr PerLayerName kPerLayer[] = {
    {SiteKind::kResidPre, "resid_pre", "hook_resid_pre"},
    // The attention heads merged, the input of the output projection (o_proj; GPT-2's
    // attn.c_proj): column h*head_dim + t is dimension t of query head h.
    {SiteKind::kZ, "z", "attn.hook_z"},
    {SiteKind::kAttnOut, "attn_out", "hook_attn_out"},
    {SiteKind::kResidMid, "resid_mid", "hook_resid_mid"},
    // Mixture-of-experts layers: the router's linear output, the experts it chose (in
    // descending probability, as HF's topk orders them) and the weights their outputs
    // were multiplied by (renormalised when the family does).
    {SiteKind::kRouterLogits, "router_logits", "mlp.hook_router_logits"},
    {SiteKind::kExpertIds, "expert_ids", "mlp.hook_expert_indices"},
    {SiteKind::kExpertWeights, "expert_weights", "mlp.hook_routing_weights"},
    {SiteKind::kMlpPost, "mlp_post", "mlp.hook_post"},
    {SiteKind::kMlpOut, "mlp_out", "hook_mlp_out"},
    {SiteKind::kResidPost, "resid_post", "hook_resid_post"},
};

constexpr std::string_view kEmbedHook = "hook_embed";
constexpr std::string_view kLnFinalHook = "ln_final.hook_normalized";

// Position of a site in the forward pass, for sorting.
std::pair<int, int> ForwardOrder(const Site& site) {
  if (site.kind == SiteKind::kEmbed) return {-1, 0};
  if (site.kind == SiteKind::kLnFinal) return {1 << 30, 0};
  for (int i = 0; i < static_cast<int>(std::size(kPerLayer)); ++i) {
    if (kPerLayer[i].kind == site.kind) return {site.layer, i};
  }
  return {1 << 30, 1};
}

std::string_view Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::string LayerRange(int num_layers) {
  return "the model has " + std::to_string(num_layers) + " layers (0.." +
         std::to_string(num_layers - 1) + ")";
}

// Parses "blocks.{L}.{suffix}"; nullopt when `entry` does not have that form.
std::optional<std::pair<int, SiteKind>> ParseFullName(std::string_view entry) {
  constexpr std::string_view kPrefix = "blocks.";
  if (!entry.starts_with(kPrefix)) return std::nullopt;
  entry.remove_prefix(kPrefix.size());
  const auto dot = entry.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  int layer = 0;
  const auto [end, error] = std::from_chars(entry.data(), entry.data() + dot, layer);
  if (error != std::errc() || end != entry.data() + dot) return std::nullopt;
  const std::string_view suffix = entry.substr(dot + 1);
  for (const PerLayerName& name : kPerLayer) {
    if (suffix == name.hook_suffix) return std::pair{layer, name.kind};
  }
  return std::nullopt;
}

bool IsRouting(SiteKind kind) {
  return kind == SiteKind::kRouterLogits || kind == SiteKind::kExpertIds ||
         kind == SiteKind::kExpertWeights;
}

// Why `site` is not in `config`, for a site ExistsIn refuses.
std::string Missing(const Site& site, const ModelConfig& config) {
  const std::string layer = "layer " + std::to_string(site.layer) + " of " + config.name;
  if (IsRouting(site.kind) && config.moe.experts == 0) {
    return config.name + " (model_type " + config.model_type +
           ") has no router: routing sites exist only in mixture-of-experts families "
           "(mixtral, qwen2_moe, qwen3_moe, olmoe)";
  }
  if (IsRouting(site.kind)) return layer + " is a dense MLP (mlp_only_layers), which has no router";
  return layer + " is a mixture of experts; mlp_post exists only in a dense MLP";
}

}  // namespace

std::string Site::HookName() const {
  if (kind == SiteKind::kEmbed) return std::string(kEmbedHook);
  if (kind == SiteKind::kLnFinal) return std::string(kLnFinalHook);
  for (const PerLayerName& name : kPerLayer) {
    if (name.kind == kind) {
      return "blocks." + std::to_string(layer) + "." + std::string(name.hook_suffix);
    }
  }
  return "unknown";
}

int Site::Width(const ModelConfig& config) const {
  switch (kind) {
    case SiteKind::kMlpPost:
      return config.intermediate;
    case SiteKind::kZ:
      return config.heads * config.head_dim;
    case SiteKind::kRouterLogits:
      return config.moe.experts;
    case SiteKind::kExpertIds:
    case SiteKind::kExpertWeights:
      return config.moe.top_k;
    default:
      return config.hidden;
  }
}

bool Site::ExistsIn(const ModelConfig& config) const {
  if (layer < 0 || layer >= config.layers)
    return kind == SiteKind::kEmbed || kind == SiteKind::kLnFinal;
  if (IsRouting(kind)) return config.IsSparse(layer);
  if (kind == SiteKind::kMlpPost) return !config.IsSparse(layer);
  return true;
}

int Site::LastLayerNeeded(const ModelConfig& config) const {
  switch (kind) {
    case SiteKind::kEmbed:
      return -1;
    case SiteKind::kResidPre:
      return layer - 1;  // the input of layer L is the output of layer L - 1
    case SiteKind::kLnFinal:
      return config.layers - 1;
    default:
      return layer;
  }
}

std::expected<std::vector<Site>, std::string> ParseSites(const std::vector<std::string>& entries,
                                                         const std::vector<int>& layers,
                                                         const ModelConfig& config) {
  const int num_layers = config.layers;
  if (entries.empty()) {
    return std::unexpected("--sites is empty: name at least one site, e.g. resid_post");
  }
  for (int layer : layers) {
    if (layer < 0 || layer >= num_layers) {
      return std::unexpected("layer " + std::to_string(layer) +
                             " is out of range: " + LayerRange(num_layers));
    }
  }
  std::vector<Site> sites;
  for (const std::string& raw : entries) {
    const std::string_view entry = Trim(raw);
    if (entry.empty()) return std::unexpected("--sites has an empty entry");
    if (entry == "embed" || entry == kEmbedHook) {
      sites.push_back({SiteKind::kEmbed, -1});
      continue;
    }
    if (entry == "ln_final" || entry == kLnFinalHook) {
      sites.push_back({SiteKind::kLnFinal, -1});
      continue;
    }
    const PerLayerName* short_form = nullptr;
    for (const PerLayerName& name : kPerLayer) {
      if (entry == name.short_name) short_form = &name;
    }
    if (short_form != nullptr) {
      if (layers.empty()) {
        return std::unexpected("\"" + std::string(entry) +
                               "\" is taken at each of the given layers, but no layers were "
                               "given (--layers); or name one layer, e.g. blocks.0." +
                               std::string(short_form->hook_suffix));
      }
      // Taken where the layer has it: routing sites on routed layers, mlp_post on dense.
      const size_t before = sites.size();
      for (int layer : layers) {
        const Site site{short_form->kind, layer};
        if (site.ExistsIn(config)) sites.push_back(site);
      }
      if (sites.size() == before) {
        return std::unexpected("\"" + std::string(entry) +
                               "\": " + Missing({short_form->kind, layers.front()}, config) +
                               (layers.size() > 1 ? ", as are the other given layers" : ""));
      }
      continue;
    }
    const auto full = ParseFullName(entry);
    if (!full) {
      return std::unexpected(
          "\"" + std::string(entry) +
          "\" is not a site; use embed, resid_pre, z, attn_out, resid_mid, router_logits, "
          "expert_ids, expert_weights, mlp_post, mlp_out, resid_post, ln_final or a full "
          "hook name such as blocks.0.hook_resid_post");
    }
    if (full->first < 0 || full->first >= num_layers) {
      return std::unexpected("\"" + std::string(entry) + "\": layer " +
                             std::to_string(full->first) +
                             " is out of range: " + LayerRange(num_layers));
    }
    const Site site{full->second, full->first};
    if (!site.ExistsIn(config)) {
      return std::unexpected("\"" + std::string(entry) + "\": " + Missing(site, config));
    }
    sites.push_back(site);
  }
  std::stable_sort(sites.begin(), sites.end(),
                   [](const Site& a, const Site& b) { return ForwardOrder(a) < ForwardOrder(b); });
  sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
  return sites;
}

}  // namespace actex
