#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/cli/commands.h"
#include "actors/cli/inspect_latents.h"
#include "base/whole_file.h"
#include "storage/json_field.h"
#include "storage/non_finite_sites.h"
#include "storage/sae_record.h"
#include "storage/site_statistics.h"
#include "storage/stored_site.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

int64_t CountLines(const fs::path& path) {
  std::ifstream file(path);
  int64_t lines = 0;
  for (std::string line; std::getline(file, line);) ++lines;
  return lines;
}

// What inspecting one host folder found.
enum class HostHealth { kHealthy, kShardMissing, kUnreadable };

// Reads `host_dir`/metadata.json, type-checking every field printed: an error names
// the file and the field.
std::expected<nlohmann::json, std::string> ReadHostMetadata(const fs::path& host_dir) {
  const std::string path = (host_dir / "metadata.json").string();
  auto text = ReadWholeFile(path);  // a regular file of a sane size
  if (!text) return std::unexpected(text.error());
  auto metadata = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (metadata.is_discarded()) return std::unexpected(path + " is not valid JSON");
  const JsonPlace top{path, ""};
  if (!metadata.is_object()) return std::unexpected(JsonTypeError(top, &metadata, "an object"));
  if (auto complete = JsonBoolField(metadata, top, "complete"); !complete) {
    return std::unexpected(complete.error());
  }
  if (auto dtype = JsonStringField(metadata, top, "dtype"); !dtype) {
    return std::unexpected(dtype.error());
  }
  auto sites = JsonArrayField(metadata, top, "sites");
  if (!sites) return std::unexpected(sites.error());
  for (size_t i = 0; i < sites->get().size(); ++i) {
    if (auto site = ReadStoredSite(sites->get()[i], top.Member("sites").Element(i)); !site) {
      return std::unexpected(site.error());
    }
  }
  auto shards = JsonArrayField(metadata, top, "shards");
  if (!shards) return std::unexpected(shards.error());
  for (size_t i = 0; i < shards->get().size(); ++i) {
    const JsonPlace place = top.Member("shards").Element(i);
    if (auto name = JsonStringField(shards->get()[i], place, "file"); !name) {
      return std::unexpected(name.error());
    }
    for (const char* key : {"first_doc_id", "last_doc_id", "docs", "tokens", "bytes"}) {
      if (auto number = JsonIntField(shards->get()[i], place, key, 0); !number) {
        return std::unexpected(number.error());
      }
    }
  }
  auto totals = JsonObjectField(metadata, top, "totals");
  if (!totals) return std::unexpected(totals.error());
  for (const char* key : {"docs", "tokens", "shards", "bytes"}) {
    if (auto number = JsonIntField(totals->get(), top.Member("totals"), key, 0); !number) {
      return std::unexpected(number.error());
    }
  }
  return metadata;
}

// Prints one host folder's metadata.json; kShardMissing when it lists a shard that
// is not on disk with the listed size, kUnreadable when the file is missing, not
// JSON, or has a field of the wrong type.
HostHealth InspectHost(const fs::path& host_dir, std::map<std::string, int64_t>* totals) {
  auto read = ReadHostMetadata(host_dir);
  if (!read) {
    spdlog::error("{}; see actex verify", read.error());
    return HostHealth::kUnreadable;
  }
  const nlohmann::json& metadata = *read;
  HostHealth health = HostHealth::kHealthy;
  std::cout << host_dir.filename().string() << ": "
            << (metadata["complete"].get<bool>() ? "complete" : "incomplete") << ", dtype "
            << metadata["dtype"].get<std::string>() << "\n  sites:";
  for (const auto& entry : metadata["sites"]) {
    const StoredSite site = *ReadStoredSite(entry, JsonPlace{});  // checked when read
    std::cout << ' ' << site.name << '[' << site.width << ']'
              << (site.integer ? std::string(" ") + kIntegerSiteDtype : "");
  }
  std::cout << '\n';
  // The corpus size is informative only: printed when it is well-formed.
  if (auto config = metadata.find("config"); config != metadata.end() && config->is_object()) {
    if (auto size = config->find("corpus_size"); size != config->end() && size->is_object()) {
      const JsonPlace place{"", ""};
      auto count = [&](const char* key) { return JsonIntField(*size, place, key, 0).value_or(0); };
      auto documents = JsonIntField(*size, place, "documents", 0);
      std::cout << "  corpus: " << count("parquet_files") << " Parquet files ("
                << count("parquet_rows") << " rows), " << count("jsonl_files") << " JSONL files ("
                << count("jsonl_bytes") << " bytes), "
                << (documents ? std::to_string(*documents) : std::string("unknown"))
                << " documents in all\n";
    }
    // The SAEs whose latents the shards hold (--sae): site, library, shape, K, files.
    auto saes = ReadSaeRecords(*config, JsonPlace{"metadata.json", "config"});
    if (!saes) spdlog::warn("{}: {}", host_dir.string(), saes.error());
    for (const SaeRecord& sae : saes.value_or(std::vector<SaeRecord>{})) {
      std::cout << "  sae " << DescribeSaeRecord(sae) << '\n';
    }
  }
  for (const auto& shard : metadata["shards"]) {
    const std::string name = shard["file"].get<std::string>();
    std::error_code error;
    auto size = fs::file_size(host_dir / name, error);
    const bool present = !error && static_cast<int64_t>(size) == shard["bytes"].get<int64_t>();
    if (!present) health = HostHealth::kShardMissing;
    std::cout << "  " << name << ": docs " << shard["first_doc_id"].get<int64_t>() << ".."
              << shard["last_doc_id"].get<int64_t>() << " (" << shard["docs"].get<int64_t>()
              << "), tokens " << shard["tokens"].get<int64_t>() << ", bytes "
              << shard["bytes"].get<int64_t>() << (present ? "" : "  MISSING OR WRONG SIZE")
              << '\n';
  }
  const auto& host_totals = metadata["totals"];
  int64_t rejected =
      fs::exists(host_dir / "rejects.jsonl") ? CountLines(host_dir / "rejects.jsonl") : 0;
  std::cout << "  total: " << host_totals["docs"].get<int64_t>() << " docs, "
            << host_totals["tokens"].get<int64_t>() << " tokens, "
            << host_totals["shards"].get<int64_t>() << " shards, "
            << host_totals["bytes"].get<int64_t>() << " bytes, " << rejected << " rejected lines\n";
  if (const auto non_finite = NonFiniteSites(metadata); !non_finite.empty()) {
    std::cout << "  not finite as stored: " << DescribeNonFinite(non_finite) << '\n';
  }
  for (const char* key : {"docs", "tokens", "shards", "bytes"}) {
    (*totals)[key] += host_totals[key].get<int64_t>();
  }
  (*totals)["rejected"] += rejected;
  return health;
}

// Each site's statistics merged over the host folders, printed as a table or as JSON
// (with the mean and variance vectors); false when a folder has none.
bool PrintStatistics(const std::vector<fs::path>& hosts, bool as_json) {
  std::vector<std::pair<std::string, SiteStatistics>> sites;
  for (const fs::path& host : hosts) {
    const auto text = ReadWholeFile((host / "metadata.json").string());
    const auto metadata = nlohmann::json::parse(text.value_or(""), nullptr,
                                                /*allow_exceptions=*/false);
    const auto statistics =
        metadata.is_object() ? metadata.value("statistics", nlohmann::json()) : nlohmann::json();
    if (!statistics.is_object()) {
      spdlog::error(
          "{}: metadata.json records no statistics (written by an older actex, or "
          "resumed from such an output)",
          host.string());
      return false;
    }
    for (const auto& [name, json] : statistics.items()) {
      auto site = SiteStatistics::FromJson(json);
      if (!site) {
        spdlog::error("{}/metadata.json: statistics[\"{}\"]: {}", host.string(), name,
                      site.error());
        return false;
      }
      auto known = std::find_if(sites.begin(), sites.end(),
                                [&](const auto& entry) { return entry.first == name; });
      if (known == sites.end()) {
        sites.emplace_back(name, *site);
      } else if (known->second.width() != site->width()) {
        spdlog::error(
            "{}/metadata.json: statistics[\"{}\"].width is {}, another host folder's "
            "is {}; see actex verify",
            host.string(), name, site->width(), known->second.width());
        return false;
      } else {
        known->second.Merge(*site);
      }
    }
  }
  nlohmann::ordered_json merged = nlohmann::ordered_json::object();
  for (const auto& [name, site] : sites) {
    if (as_json) {
      merged[name] = {{"width", site.width()},
                      {"count", site.count()},
                      {"mean", site.Mean()},
                      {"variance", site.Variance()},
                      {"mean_norm", site.MeanNorm()},
                      {"mean_squared_norm", site.MeanSquaredNorm()},
                      {"max_abs", site.max_abs()},
                      {"threshold", site.threshold()},
                      {"rows_over_threshold", site.rows_over_threshold()},
                      {"non_finite_values", site.non_finite_values()},
                      {"non_finite_rows", site.non_finite_rows()},
                      {"normalization_factor", site.NormalizationFactor()}};
      continue;
    }
    double variance = 0;
    for (double v : site.Variance()) variance += v / site.width();
    std::cout << name << " [" << site.width() << "]: " << site.count() << " rows, mean norm "
              << site.MeanNorm() << ", mean squared norm " << site.MeanSquaredNorm()
              << ", mean variance " << variance << ", max |value| " << site.max_abs() << ", "
              << site.rows_over_threshold() << " rows with |value| > " << site.threshold()
              << (site.non_finite_values() > 0
                      ? ", " + std::to_string(site.non_finite_values()) +
                            " values not finite as stored (in " +
                            std::to_string(site.non_finite_rows()) + " rows)"
                      : std::string())
              << "\n  normalization factor sqrt(" << site.width()
              << ") / mean norm = " << site.NormalizationFactor() << '\n';
  }
  if (as_json) std::cout << merged.dump(1) << '\n';
  return true;
}

}  // namespace

CommandRunner AddInspectCommand(CLI::App& command) {
  auto out_dir = std::make_shared<std::string>();
  auto stats = std::make_shared<bool>(false), json = std::make_shared<bool>(false);
  command.add_option("OUT", *out_dir, "an extraction's output folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  command.add_flag("--stats", *stats,
                   "print each site's statistics over all host folders: rows, mean norm, "
                   "variance, max |value|, the normalization factor sqrt(width) / mean norm");
  command.add_flag("--json", *json, "with --stats: as JSON, with the mean and variance vectors");
  auto latents = std::make_shared<bool>(false);
  command.add_flag("--latents", *latents,
                   "merge every shard's SAE latent examples into OUT/latents.safetensors and "
                   "print per SAE its dead latents and densest latents");
  return [out_dir, stats, json, latents] {
    std::vector<fs::path> hosts;
    for (const auto& entry : fs::directory_iterator(*out_dir)) {
      if (entry.is_directory() && fs::exists(entry.path() / "metadata.json")) {
        hosts.push_back(entry.path());
      }
    }
    std::sort(hosts.begin(), hosts.end());
    if (hosts.empty()) {
      spdlog::error("{} holds no host folder with a metadata.json", *out_dir);
      return 1;
    }
    if (*stats) return PrintStatistics(hosts, *json) ? 0 : 1;
    if (*latents) return InspectLatents(*out_dir, hosts);
    std::map<std::string, int64_t> totals;
    bool shards_missing = false, unreadable = false;
    for (const fs::path& host : hosts) {
      const HostHealth health = InspectHost(host, &totals);
      shards_missing = shards_missing || health == HostHealth::kShardMissing;
      unreadable = unreadable || health == HostHealth::kUnreadable;
    }
    std::cout << "all hosts: " << totals["docs"] << " docs, " << totals["tokens"] << " tokens, "
              << totals["shards"] << " shards, " << totals["rejected"] << " rejected lines\n";
    // A file it cannot read is a refusal (2); listed shards not on disk a finding (1).
    return unreadable ? 2 : shards_missing ? 1 : 0;
  };
}

}  // namespace actex
