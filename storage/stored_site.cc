#include "storage/stored_site.h"

#include <climits>

namespace actex {

nlohmann::ordered_json StoredSiteJson(const StoredSite& site) {
  nlohmann::ordered_json entry = {{"name", site.name}, {"width", site.width}};
  if (site.integer) entry["dtype"] = kIntegerSiteDtype;
  return entry;
}

std::expected<StoredSite, std::string> ReadStoredSite(const nlohmann::json& entry,
                                                      const JsonPlace& place) {
  auto name = JsonStringField(entry, place, "name");
  if (!name) return std::unexpected(name.error());
  auto width = JsonIntField(entry, place, "width", 1);
  if (!width) return std::unexpected(width.error());
  if (*width > INT_MAX) {
    return std::unexpected(place.Member("width").Describe() + " is " + std::to_string(*width) +
                           ", more than a width can be");
  }
  StoredSite site{*name, static_cast<int>(*width), false};
  if (!entry.contains("dtype")) return site;
  auto dtype = JsonStringField(entry, place, "dtype");
  if (!dtype) return std::unexpected(dtype.error());
  if (*dtype != kIntegerSiteDtype) {
    return std::unexpected(place.Member("dtype").Describe() + " is \"" + *dtype +
                           "\", expected \"I32\" (an integer site) or no dtype (a float site "
                           "in the file's dtype)");
  }
  site.integer = true;
  return site;
}

}  // namespace actex
