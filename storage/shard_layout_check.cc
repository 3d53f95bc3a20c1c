#include "storage/shard_layout_check.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/text.h"
#include "storage/latent_sites.h"
#include "storage/safetensors.h"

namespace actex {
namespace {

struct HeaderEntry {
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t begin = 0, end = 0;
};

bool ReadCount(const nlohmann::json& value, int64_t* out) {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(value.get<uint64_t>());
    return true;
  }
  if (!value.is_number_integer() || value.get<int64_t>() < 0) return false;
  *out = value.get<int64_t>();
  return true;
}

// One header entry, checked as the format requires; nullopt after adding a fault.
std::optional<HeaderEntry> ParseEntry(const std::string& name, const nlohmann::json& entry,
                                      int64_t data_bytes, std::vector<std::string>* faults) {
  auto fault = [&](const std::string& what) {
    faults->push_back("header: tensor \"" + name + "\" " + what);
    return std::nullopt;
  };
  if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
      !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
      !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2) {
    return fault("lacks a string dtype, a shape list or data_offsets [begin, end]");
  }
  HeaderEntry parsed;
  parsed.dtype = entry["dtype"].get<std::string>();
  int64_t element_bytes = SafetensorsDtypeBytes(parsed.dtype);
  if (element_bytes == 0) return fault("has unknown dtype \"" + parsed.dtype + "\"");
  int64_t bytes = element_bytes;
  for (const auto& dim : entry["shape"]) {
    int64_t value = 0;
    if (!ReadCount(dim, &value)) return fault("has shape " + entry["shape"].dump());
    parsed.shape.push_back(value);
    if (__builtin_mul_overflow(bytes, value, &bytes)) return fault("is too large");
  }
  if (!ReadCount(entry["data_offsets"][0], &parsed.begin) ||
      !ReadCount(entry["data_offsets"][1], &parsed.end) || parsed.begin > parsed.end ||
      parsed.end > data_bytes) {
    return fault("has data_offsets " + entry["data_offsets"].dump() + " outside the " +
                 std::to_string(data_bytes) + " data bytes");
  }
  if (parsed.end - parsed.begin != bytes) {
    return fault(parsed.dtype + " " + ShapeText(parsed.shape) + " needs " + std::to_string(bytes) +
                 " bytes but its data_offsets span " + std::to_string(parsed.end - parsed.begin));
  }
  return parsed;
}

}  // namespace

std::optional<int64_t> CheckShardLayout(const std::string& header_json, int64_t data_bytes,
                                        const ShardEntry& shard, std::vector<std::string>* faults) {
  nlohmann::json header = nlohmann::json::parse(header_json, nullptr, false);
  if (header.is_discarded() || !header.is_object()) {
    faults->push_back("header is not a JSON object");
    return std::nullopt;
  }
  std::map<std::string, HeaderEntry> entries;
  bool all_parsed = true;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    auto parsed = ParseEntry(name, entry, data_bytes, faults);
    if (parsed) entries[name] = *parsed;
    all_parsed = all_parsed && parsed.has_value();
  }
  // The token count every tensor must agree on: token_ids' if it is usable.
  int64_t tokens = shard.tokens;
  if (auto ids = entries.find("token_ids"); ids != entries.end() && ids->second.shape.size() == 1) {
    tokens = ids->second.shape[0];
  }
  if (tokens != shard.tokens) {
    faults->push_back("holds " + std::to_string(tokens) + " tokens, metadata.json lists " +
                      std::to_string(shard.tokens));
  }
  std::map<std::string, std::pair<std::string, std::vector<int64_t>>> expected;
  for (const StoredSite& site : shard.sites)
    expected[site.name] = {site.Dtype(shard.site_dtype), {tokens, site.width}};
  expected["token_ids"] = {"I32", {tokens}};
  expected["doc_ids"] = {"I64", {tokens}};
  expected["positions"] = {"I32", {tokens}};
  bool ids_usable = true;
  for (const auto& [name, want] : expected) {
    auto found = entries.find(name);
    bool usable = found != entries.end();
    if (!usable) {
      if (!header.contains(name)) faults->push_back("has no tensor \"" + name + "\"");
    } else if (found->second.dtype != want.first) {
      const bool site = name != "token_ids" && name != "doc_ids" && name != "positions";
      const bool integer_site = site && want.first == kIntegerSiteDtype;
      faults->push_back("tensor \"" + name + "\" is " + found->second.dtype + ", expected " +
                        want.first +
                        (integer_site ? " (an integer site in metadata.json)"
                         : site       ? " (metadata.json dtype)"
                                      : ""));
      usable = false;
    } else if (found->second.shape != want.second) {
      faults->push_back("tensor \"" + name + "\" has shape " + ShapeText(found->second.shape) +
                        ", expected " + ShapeText(want.second));
      usable = false;
    }
    if (name == "doc_ids" || name == "positions") ids_usable = ids_usable && usable;
  }
  std::vector<std::pair<HeaderEntry, std::string>> ordered;
  for (const auto& [name, entry] : entries) {
    if (!expected.contains(name)) faults->push_back("holds unexpected tensor \"" + name + "\"");
    ordered.push_back({entry, name});
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  int64_t covered = 0;
  for (size_t i = 0; i < ordered.size(); ++i) {
    if (i > 0 && ordered[i].first.begin < ordered[i - 1].first.end) {
      faults->push_back("header: tensors \"" + ordered[i - 1].second + "\" and \"" +
                        ordered[i].second + "\" overlap");
    }
    covered += ordered[i].first.end - ordered[i].first.begin;
  }
  if (all_parsed && covered < data_bytes) {
    faults->push_back(std::to_string(data_bytes - covered) +
                      " bytes of the data section belong to no tensor");
  }
  if (!ids_usable) return std::nullopt;
  return tokens;
}

}  // namespace actex
