#include "storage/non_finite_sites.h"

#include <algorithm>
#include <fstream>

namespace actex {
namespace {

// The count under `key`, or 0 when it is absent or not a non-negative whole number.
int64_t CountOf(const nlohmann::json& site, const char* key) {
  const auto found = site.find(key);
  if (found == site.end() || !found->is_number_integer()) return 0;
  return std::max(int64_t{0}, found->get<int64_t>());
}

}  // namespace

std::vector<NonFiniteSite> NonFiniteSites(const nlohmann::json& metadata) {
  std::vector<NonFiniteSite> sites;
  if (!metadata.is_object()) return sites;
  const auto statistics = metadata.find("statistics");
  if (statistics == metadata.end() || !statistics->is_object()) return sites;
  for (const auto& [name, site] : statistics->items()) {
    if (!site.is_object()) continue;
    NonFiniteSite counted{name, CountOf(site, "non_finite_values"),
                          CountOf(site, "non_finite_rows")};
    if (counted.values > 0) sites.push_back(std::move(counted));
  }
  return sites;
}

std::expected<FolderNonFinite, std::string> ReadNonFiniteSites(const std::string& metadata_path) {
  std::ifstream file(metadata_path);
  if (!file) return std::unexpected(metadata_path + ": cannot be opened");
  const auto metadata = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (!metadata.is_object()) return std::unexpected(metadata_path + ": not a JSON object");
  FolderNonFinite folder;
  const auto dtype = metadata.find("dtype");
  if (dtype != metadata.end() && dtype->is_string()) folder.dtype = dtype->get<std::string>();
  folder.sites = NonFiniteSites(metadata);
  return folder;
}

std::string DescribeNonFinite(const std::vector<NonFiniteSite>& sites) {
  std::string text;
  for (const NonFiniteSite& site : sites) {
    if (!text.empty()) text += "; ";
    text += site.site + ": " + std::to_string(site.values) +
            (site.values == 1 ? " value" : " values") + " in " + std::to_string(site.rows) +
            (site.rows == 1 ? " row" : " rows");
  }
  return text;
}

}  // namespace actex
