#include "actors/sae_plan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "base/absolute_path.h"
#include "base/whole_file.h"
#include "model/tokenizer/file_digest.h"
#include "sae/sae_folders.h"
#include "sae/sae_loader.h"
#include "sae/sae_site.h"
#include "storage/shard_examples.h"

namespace actex {
namespace {

// SAE weights are read whole to be digested: a 16x SAE of a 7B model's residual
// stream is 0.8 GB in float32.
constexpr int64_t kSaeFileMaxBytes = int64_t{64} << 30;

std::string EntryText(const PlannedSae& sae) {
  return "--sae " + sae.site.HookName() + "=" + sae.dir;
}

// The SHA-256 of the files the SAE's library saved, by name.
std::expected<std::map<std::string, std::string>, std::string> DigestSaeFiles(
    const PlannedSae& sae) {
  const bool sparsify = sae.model->format == SaeFormat::kSparsify;
  std::map<std::string, std::string> digests;
  for (const char* name : {sparsify ? kSparsifyConfigFile : kSaeLensConfigFile,
                           sparsify ? kSparsifyWeightsFile : kSaeLensWeightsFile}) {
    auto bytes = ReadWholeFile((std::filesystem::path(sae.dir) / name).string(), kSaeFileMaxBytes);
    if (!bytes) return std::unexpected(bytes.error());
    digests[name] = Sha256HexOfBytes(*bytes);
  }
  return digests;
}

}  // namespace

std::expected<std::pair<std::string, std::string>, std::string> SplitSaeEntry(
    const std::string& entry) {
  const size_t equals = entry.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == entry.size()) {
    return std::unexpected("\"" + entry +
                           "\" is not SITE=DIR (a hook name or short form, '=', the SAE's "
                           "folder)");
  }
  return std::make_pair(entry.substr(0, equals), entry.substr(equals + 1));
}

std::expected<std::vector<PlannedSae>, std::string> PlanSaes(
    const std::vector<std::string>& entries, const std::vector<int>& layers,
    const ModelConfig& config) {
  std::vector<PlannedSae> saes;
  std::set<std::string> sites_taken;
  for (const std::string& entry : entries) {
    auto split = SplitSaeEntry(entry);
    if (!split) return std::unexpected("--sae " + split.error());
    const auto& [site_text, dir] = *split;
    auto sites = ParseSites({site_text}, layers, config);
    if (!sites) return std::unexpected("--sae " + entry + ": " + sites.error());
    if (sites->size() != 1) {
      return std::unexpected(
          "--sae " + entry + ": \"" + site_text + "\" names " + std::to_string(sites->size()) +
          " sites at --layers; give one hook name, such as " + sites->front().HookName());
    }
    const Site site = sites->front();
    if (site.IsInteger()) {
      return std::unexpected("--sae " + entry + ": " + site.HookName() +
                             " holds expert ids, not activations an SAE encodes");
    }
    if (!sites_taken.insert(site.HookName()).second) {
      return std::unexpected("--sae " + entry + ": a second SAE on " + site.HookName() +
                             "; give one SAE per site");
    }
    saes.push_back({site, dir, nullptr, 0, {}});
  }
  return saes;
}

std::expected<void, std::string> LoadPlannedSaes(std::vector<PlannedSae>& saes, int64_t top_k,
                                                 int64_t examples, const ModelConfig& config) {
  std::map<std::string, int64_t> latents_by_site;
  for (PlannedSae& sae : saes) {
    auto model = LoadSae(sae.dir);
    if (!model) return std::unexpected(EntryText(sae) + ": " + model.error());
    const std::string site = sae.site.HookName();
    if (auto matches = CheckSaeMatchesSite(*model, site, sae.site.Width(config)); !matches) {
      return std::unexpected(EntryText(sae) + ": " + matches.error());
    }
    sae.model = std::make_shared<const SaeModel>(std::move(*model));
    sae.k = sae.model->activation == SaeActivation::kTopK ? sae.model->k
                                                          : std::min(top_k, sae.model->d_sae);
    latents_by_site[site] = sae.model->d_sae;
    auto files = DigestSaeFiles(sae);
    if (!files) return std::unexpected(EntryText(sae) + ": " + files.error());
    sae.record = {site,
                  AbsolutePath(sae.dir),
                  SaeFormatName(sae.model->format),
                  SaeActivationName(sae.model->activation),
                  sae.model->d_in,
                  sae.model->d_sae,
                  sae.k,
                  std::move(*files)};
  }
  return ShardExamples::CheckMemory(latents_by_site, examples);
}

std::string SaeFingerprint(const std::vector<PlannedSae>& saes) {
  std::string text;
  for (const PlannedSae& sae : saes) {
    text += (text.empty() ? "" : "; ") + sae.record.site + " K " + std::to_string(sae.k);
    for (const auto& [name, digest] : sae.record.files) text += " " + name + ":" + digest;
  }
  return text.empty() ? "none" : text;
}

}  // namespace actex
