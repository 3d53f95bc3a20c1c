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
  if (kind == SiteKind::kMlpPost) return config.intermediate;
  if (kind == SiteKind::kZ) return config.heads * config.head_dim;
  return config.hidden;
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
                                                         int num_layers) {
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
        return std::unexpected("--sites entry \"" + std::string(entry) +
                               "\" is taken at each of the given layers, but no layers were "
                               "given (--layers); or name one layer, e.g. blocks.0." +
                               std::string(short_form->hook_suffix));
      }
      for (int layer : layers) sites.push_back({short_form->kind, layer});
      continue;
    }
    const auto full = ParseFullName(entry);
    if (!full) {
      return std::unexpected(
          "--sites entry \"" + std::string(entry) +
          "\" is not a site; use embed, resid_pre, z, attn_out, resid_mid, mlp_post, mlp_out, "
          "resid_post, ln_final or a full hook name such as blocks.0.hook_resid_post");
    }
    if (full->first < 0 || full->first >= num_layers) {
      return std::unexpected("--sites entry \"" + std::string(entry) + "\": layer " +
                             std::to_string(full->first) +
                             " is out of range: " + LayerRange(num_layers));
    }
    sites.push_back({full->second, full->first});
  }
  std::stable_sort(sites.begin(), sites.end(),
                   [](const Site& a, const Site& b) { return ForwardOrder(a) < ForwardOrder(b); });
  sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
  return sites;
}

}  // namespace actex
