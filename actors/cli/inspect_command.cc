#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/cli/commands.h"
#include "storage/non_finite_sites.h"
#include "storage/site_statistics.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

int64_t CountLines(const fs::path& path) {
  std::ifstream file(path);
  int64_t lines = 0;
  for (std::string line; std::getline(file, line);) ++lines;
  return lines;
}

// Prints one host folder's metadata.json; returns false when it is missing, not
// readable, or lists a shard that is not on disk with the listed size.
bool InspectHost(const fs::path& host_dir, nlohmann::json* totals) {
  std::ifstream file(host_dir / "metadata.json");
  auto metadata = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (metadata.is_discarded() || !metadata.is_object()) {
    spdlog::error("{}: metadata.json is missing or not valid JSON", host_dir.string());
    return false;
  }
  bool healthy = true;
  std::cout << host_dir.filename().string() << ": "
            << (metadata.value("complete", false) ? "complete" : "incomplete") << ", dtype "
            << metadata.value("dtype", "?") << "\n  sites:";
  for (const auto& site : metadata["sites"]) {
    std::cout << ' ' << site.value("name", "?") << '[' << site.value("width", 0) << ']';
  }
  std::cout << '\n';
  if (auto config = metadata.find("config"); config != metadata.end() && config->is_object()) {
    if (auto size = config->find("corpus_size"); size != config->end() && size->is_object()) {
      const auto& documents = (*size)["documents"];
      std::cout << "  corpus: " << size->value("parquet_files", 0) << " Parquet files ("
                << size->value("parquet_rows", 0) << " rows), " << size->value("jsonl_files", 0)
                << " JSONL files (" << size->value("jsonl_bytes", 0) << " bytes), "
                << (documents.is_number_integer() ? std::to_string(documents.get<int64_t>())
                                                  : std::string("unknown"))
                << " documents in all\n";
    }
  }
  for (const auto& shard : metadata["shards"]) {
    fs::path path = host_dir / shard.value("file", "");
    std::error_code error;
    auto size = fs::file_size(path, error);
    bool present = !error && static_cast<int64_t>(size) == shard.value("bytes", int64_t{-1});
    healthy = healthy && present;
    std::cout << "  " << shard.value("file", "?") << ": docs " << shard.value("first_doc_id", 0)
              << ".." << shard.value("last_doc_id", 0) << " (" << shard.value("docs", 0)
              << "), tokens " << shard.value("tokens", 0) << ", bytes "
              << shard.value("bytes", 0) << (present ? "" : "  MISSING OR WRONG SIZE") << '\n';
  }
  const auto& host_totals = metadata["totals"];
  int64_t rejected = fs::exists(host_dir / "rejects.jsonl") ? CountLines(host_dir / "rejects.jsonl") : 0;
  std::cout << "  total: " << host_totals.value("docs", 0) << " docs, "
            << host_totals.value("tokens", 0) << " tokens, " << host_totals.value("shards", 0)
            << " shards, " << host_totals.value("bytes", 0) << " bytes, " << rejected
            << " rejected lines\n";
  if (const auto non_finite = NonFiniteSites(metadata); !non_finite.empty()) {
    std::cout << "  not finite as stored: " << DescribeNonFinite(non_finite) << '\n';
  }
  for (const char* key : {"docs", "tokens", "shards", "bytes"}) {
    (*totals)[key] = totals->value(key, int64_t{0}) + host_totals.value(key, int64_t{0});
  }
  (*totals)["rejected"] = totals->value("rejected", int64_t{0}) + rejected;
  return healthy;
}

// Each site's statistics merged over the host folders, printed as a table or as JSON
// (with the mean and variance vectors); false when a folder has none.
bool PrintStatistics(const std::vector<fs::path>& hosts, bool as_json) {
  std::vector<std::pair<std::string, SiteStatistics>> sites;
  for (const fs::path& host : hosts) {
    std::ifstream file(host / "metadata.json");
    const auto metadata = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
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
        spdlog::error("{}: {}: {}", host.string(), name, site.error());
        return false;
      }
      auto known = std::find_if(sites.begin(), sites.end(),
                                [&](const auto& entry) { return entry.first == name; });
      if (known == sites.end()) {
        sites.emplace_back(name, *site);
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
  return [out_dir, stats, json] {
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
    nlohmann::json totals = nlohmann::json::object();
    bool healthy = true;
    for (const fs::path& host : hosts) healthy = InspectHost(host, &totals) && healthy;
    std::cout << "all hosts: " << totals.value("docs", 0) << " docs, " << totals.value("tokens", 0)
              << " tokens, " << totals.value("shards", 0) << " shards, "
              << totals.value("rejected", 0) << " rejected lines\n";
    return healthy ? 0 : 1;
  };
}

}  // namespace actex
