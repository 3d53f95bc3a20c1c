#include "storage/delphi_export.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "storage/command_error.h"
#include "storage/destination_folder.h"
#include "storage/file_io.h"
#include "storage/safetensors.h"
#include "storage/shard_latents.h"
#include "storage/shuffle_rows.h"

namespace actex {
namespace {

// One site's firing latents over the whole token stream.
struct SiteLocations {
  std::vector<int64_t> token;   // index into the stream
  std::vector<int32_t> latent;  // latent id
  std::vector<float> value;
};

// Reads every shard once: the token stream, and for each site its firing latents.
std::expected<void, std::string> ReadShards(const SourceOutput& source,
                                            const std::vector<std::string>& sites,
                                            std::vector<int64_t>* stream,
                                            std::vector<SiteLocations>* by_site) {
  for (const SourceShard& listed : source.shards) {
    auto shard = ShardLatents::Open(listed.path);
    if (!shard) return std::unexpected(shard.error());
    const int64_t first = static_cast<int64_t>(stream->size());
    for (int64_t row = 0; row < (*shard)->tokens(); ++row) {
      stream->push_back((*shard)->token_id(row));
    }
    for (size_t s = 0; s < sites.size(); ++s) {
      auto latents = (*shard)->ReadLatents(sites[s]);
      if (!latents) return std::unexpected(latents.error());
      SiteLocations& into = (*by_site)[s];
      for (int64_t row = 0; row < (*shard)->tokens(); ++row) {
        for (int64_t slot = 0; slot < latents->k; ++slot) {
          const size_t at = static_cast<size_t>(row * latents->k + slot);
          if (latents->ids[at] < 0 || !(latents->values[at] > 0)) continue;
          into.token.push_back(first + row);
          into.latent.push_back(latents->ids[at]);
          into.value.push_back(latents->values[at]);
        }
      }
    }
  }
  return {};
}

// "a, b" or "none".
std::string DescribeSites(const std::vector<std::string>& sites) {
  std::string text;
  for (const std::string& site : sites) text += (text.empty() ? "" : ", ") + site;
  return text.empty() ? "none" : text;
}

// delphi's split boundaries: linspace(0, width, splits + 1) truncated to integers.
std::vector<int64_t> SplitBoundaries(int64_t width, int64_t splits) {
  std::vector<int64_t> bounds;
  for (int64_t i = 0; i <= splits; ++i) {
    bounds.push_back(static_cast<int64_t>(static_cast<double>(width) * i / splits));
  }
  return bounds;
}

// The file of latents [start, end] (inclusive), named as delphi's loader parses it.
std::string RangeFileName(int64_t start, int64_t end) {
  return std::to_string(start) + "_" + std::to_string(end) + ".safetensors";
}

// Refuses, before anything is written, a .safetensors file in a site's folder that this
// export does not write: delphi's loader reads every one there, so a range file an
// earlier export left (other --splits, another SAE's width) would add its latents a
// second time, or another source's. Files this export writes are replaced whole.
std::expected<void, std::string> CheckSiteFolders(const DelphiExportOptions& options,
                                                  const std::vector<const SaeRecord*>& saes) {
  for (const SaeRecord* sae : saes) {
    if (sae->d_sae < options.splits) {
      return std::unexpected(sae->site + ": " + std::to_string(sae->d_sae) +
                             " latents cannot be split " + std::to_string(options.splits) +
                             " ways: lower --splits");
    }
    std::set<std::string> written;
    const std::vector<int64_t> bounds = SplitBoundaries(sae->d_sae, options.splits);
    for (size_t split = 0; split + 1 < bounds.size(); ++split) {
      written.insert(RangeFileName(bounds[split], bounds[split + 1] - 1));
    }
    auto left = FirstSafetensorsNotWritten(options.out_dir + "/" + sae->site, written);
    if (!left) return std::unexpected(left.error());
    if (*left) {
      return std::unexpected(
          "--to " + options.out_dir + " holds " + sae->site + "/" + **left +
          ", which this export does not write (--splits " + std::to_string(options.splits) +
          " over " + std::to_string(sae->d_sae) + " latents writes " +
          RangeFileName(bounds[0], bounds[1] - 1) + " to " +
          RangeFileName(bounds[bounds.size() - 2], bounds.back() - 1) +
          "): delphi reads every .safetensors file of the folder, so its latents would be "
          "read too; remove it, or export into a new or empty folder");
    }
  }
  return {};
}

// The cache config delphi writes beside its splits (CacheConfig plus model_name).
std::string CacheConfigJson(const DelphiExportOptions& options, int64_t tokens,
                            const std::string& model_name) {
  nlohmann::ordered_json config = {{"dataset_repo", options.source_dir},
                                   {"dataset_split", "train"},
                                   {"dataset_name", ""},
                                   {"dataset_column", "text"},
                                   {"batch_size", 1},
                                   {"cache_ctx_len", options.ctx_len},
                                   {"ctx_len", options.ctx_len},
                                   {"n_tokens", tokens},
                                   {"n_splits", options.splits},
                                   {"model_name", model_name}};
  return config.dump(4) + "\n";
}

std::expected<void, std::string> WriteSite(const DelphiExportOptions& options, const SaeRecord& sae,
                                           const SiteLocations& found,
                                           const std::vector<int64_t>& padded_stream,
                                           const std::string& model_name, int64_t tokens,
                                           DelphiExportResult* result) {
  const std::string& site = sae.site;
  const std::string dir = options.out_dir + "/" + site;
  if (auto made = MakeDirectories(dir); !made) return std::unexpected(made.error());
  const int32_t max_id =
      found.latent.empty() ? -1 : *std::max_element(found.latent.begin(), found.latent.end());
  const int64_t width = sae.d_sae;
  if (max_id >= width) {
    return std::unexpected(site + ": latent " + std::to_string(max_id) +
                           " is stored but the SAE has " + std::to_string(width) +
                           " latents (config.saes' d_sae; see actex verify)");
  }
  const std::vector<int64_t> bounds = SplitBoundaries(width, options.splits);
  const int64_t sequences = static_cast<int64_t>(padded_stream.size()) / options.ctx_len;
  for (int64_t split = 0; split < options.splits; ++split) {
    const int64_t start = bounds[split], end = bounds[split + 1] - 1;
    std::vector<size_t> chosen;  // in stream order, as delphi's own cache holds them
    for (size_t i = 0; i < found.latent.size(); ++i) {
      if (found.latent[i] >= start && found.latent[i] <= end) chosen.push_back(i);
    }
    const int64_t n = static_cast<int64_t>(chosen.size());
    const std::string path = dir + "/" + RangeFileName(start, end);
    auto written = WriteSafetensors(
        path,
        {{"locations",
          "I64",
          {n, 3},  // [n, 3]: sequence, position, latent - start
          [&](std::span<uint8_t> out) {
            for (int64_t row = 0; row < n; ++row) {
              const size_t i = chosen[row];
              const int64_t location[3] = {found.token[i] / options.ctx_len,
                                           found.token[i] % options.ctx_len,
                                           found.latent[i] - start};
              std::memcpy(out.data() + row * sizeof(location), location, sizeof(location));
            }
          }},
         {"activations",
          "F32",
          {n},  // [n]
          [&](std::span<uint8_t> out) {
            for (int64_t row = 0; row < n; ++row) {
              std::memcpy(out.data() + row * 4, &found.value[chosen[row]], 4);
            }
          }},
         {"tokens",
          "I64",
          {sequences, options.ctx_len},  // [sequences, ctx_len]
          [&](std::span<uint8_t> out) {
            std::memcpy(out.data(), padded_stream.data(), out.size());
          }}},
        {{"format", "np"}, {"source", options.source_dir}});
    if (!written) return std::unexpected(written.error());
    result->locations += n;
    ++result->files;
  }
  const std::string config_path = dir + "/config.json";
  return WriteFileAtomically(config_path, CacheConfigJson(options, tokens, model_name), nullptr);
}

}  // namespace

std::expected<void, std::string> CheckDelphiExportOptions(const DelphiExportOptions& options) {
  if (options.ctx_len < 1) return std::unexpected("--ctx-len must be at least 1");
  if (options.ctx_len > kMaxDelphiCtxLen) {
    return std::unexpected("--ctx-len " + std::to_string(options.ctx_len) + " is above " +
                           std::to_string(kMaxDelphiCtxLen) + " tokens a sequence");
  }
  if (options.splits < 1) return std::unexpected("--splits must be at least 1");
  if (options.pad_token < 0) {
    return std::unexpected("--pad-token " + std::to_string(options.pad_token) +
                           " is not a token id");
  }
  return {};
}

std::expected<DelphiExportResult, CommandError> ExportForDelphi(
    const DelphiExportOptions& options) {
  if (auto checked = CheckDelphiExportOptions(options); !checked) {
    return CommandError::Refused(checked.error());
  }
  if (auto destination = CheckDestinationFolder("--to", options.out_dir, options.source_dir);
      !destination) {
    return CommandError::Refused(destination.error());
  }
  auto source = ReadSourceOutput(options.source_dir);
  if (!source) return CommandError::Refused(source.error());
  std::vector<std::string> stored;
  for (const SaeRecord& sae : source->saes) stored.push_back(sae.site);
  std::vector<std::string> sites = options.sites.empty() ? stored : options.sites;
  if (sites.empty()) {
    return CommandError::Refused(options.source_dir +
                                 " holds no SAE latents (metadata.json's config names no SAE): "
                                 "extract with --sae SITE=DIR first");
  }
  for (const std::string& site : sites) {
    if (std::find(stored.begin(), stored.end(), site) == stored.end()) {
      return CommandError::Refused("site " + site + " has no latents in " + options.source_dir +
                                   " (sites with latents: " + DescribeSites(stored) + ")");
    }
  }
  std::vector<const SaeRecord*> saes;  // of `sites`, in order
  for (const std::string& site : sites) {
    saes.push_back(&*std::find_if(source->saes.begin(), source->saes.end(),
                                  [&](const SaeRecord& record) { return record.site == site; }));
  }
  if (auto checked = CheckSiteFolders(options, saes); !checked) {
    return CommandError::Refused(checked.error());
  }
  for (const SourceShard& listed : source->shards) {
    if (listed.gzip) {
      return CommandError::Refused(listed.path + " is gzip'd: gunzip the shards before exporting");
    }
  }
  std::vector<int64_t> stream;
  std::vector<SiteLocations> by_site(sites.size());
  if (auto read = ReadShards(*source, sites, &stream, &by_site); !read) {
    return CommandError::Stopped(read.error());
  }
  std::string model_name = options.model_name;
  if (model_name.empty()) {
    auto first = SafetensorsFile::Open(source->shards.front().path);
    if (!first) return CommandError::Stopped(first.error());
    const auto model = (*first)->metadata().find("model");
    if (model != (*first)->metadata().end()) model_name = model->second;
  }
  DelphiExportResult result;
  result.tokens = static_cast<int64_t>(stream.size());
  const int64_t tail = result.tokens % options.ctx_len;
  if (tail != 0) stream.resize(stream.size() + (options.ctx_len - tail), options.pad_token);
  result.sequences = static_cast<int64_t>(stream.size()) / options.ctx_len;
  for (size_t s = 0; s < sites.size(); ++s) {
    if (auto written =
            WriteSite(options, *saes[s], by_site[s], stream, model_name, result.tokens, &result);
        !written) {
      return CommandError::Stopped(written.error());
    }
  }
  return result;
}

}  // namespace actex
