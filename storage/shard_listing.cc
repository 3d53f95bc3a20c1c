#include "storage/shard_listing.h"

#include <functional>
#include <optional>
#include <regex>

namespace actex {

ShardListing::ShardListing(std::vector<StoredSite> sites) : sites_(std::move(sites)) {
  for (const StoredSite& site : sites_) statistics_.emplace_back(site.width);
}

void ShardListing::ContinueFrom(const nlohmann::json& earlier) {
  for (const auto& shard : earlier["shards"]) {
    shards_.push_back(nlohmann::ordered_json::parse(shard.dump()));
    ++stats_.shards;
    stats_.docs += shard.value("docs", int64_t{0});
    stats_.tokens += shard.value("tokens", int64_t{0});
    stats_.bytes += shard.value("bytes", int64_t{0});
    last_doc_id_ = shard.value("last_doc_id", last_doc_id_);
  }
  for (const auto& [chunk, documents] :
       ListedChunks(earlier).value_or(std::map<int64_t, int64_t>())) {
    listed_chunks_.insert(chunk);
    stats_.chunk_docs += documents;
  }
  if (earlier.contains("chunks_without_documents")) {
    chunks_without_documents_ =
        nlohmann::ordered_json::parse(earlier["chunks_without_documents"].dump());
  }
  const nlohmann::json& statistics = earlier.value("statistics", nlohmann::json());
  for (size_t i = 0; i < sites_.size(); ++i) {
    const auto& [name, width, integer, statistics_only] = sites_[i];
    if (integer) continue;
    auto earlier_site = statistics.is_object() && statistics.contains(name)
                            ? SiteStatistics::FromJson(statistics[name])
                            : std::unexpected(std::string("absent"));
    if (earlier_site && earlier_site->width() == width) {
      statistics_[i] = *earlier_site;
    } else if (!earlier["shards"].empty()) {
      statistics_known_ = false;  // the listed shards' rows cannot be read back here
    }
  }
}

void ShardListing::List(nlohmann::ordered_json shard, const std::vector<SiteStatistics>& rows) {
  for (const auto& chunk : shard["chunks"]) {
    listed_chunks_.insert(chunk[0].get<int64_t>());
    stats_.chunk_docs += chunk[1].get<int64_t>();
  }
  ++stats_.shards;
  stats_.docs += shard.value("docs", int64_t{0});
  stats_.tokens += shard.value("tokens", int64_t{0});
  stats_.bytes += shard.value("bytes", int64_t{0});
  last_doc_id_ = shard.value("last_doc_id", last_doc_id_);
  shards_.push_back(std::move(shard));
  for (size_t i = 0; i < statistics_.size(); ++i) statistics_[i].Merge(rows[i]);
}

void ShardListing::ListWithoutDocuments(const nlohmann::ordered_json& chunks) {
  for (const auto& chunk : chunks) {
    listed_chunks_.insert(chunk[0].get<int64_t>());
    stats_.chunk_docs += chunk[1].get<int64_t>();
    chunks_without_documents_.push_back(chunk);
  }
}

std::string ShardListing::MetadataText(bool complete, const nlohmann::json& run_config,
                                       const char* dtype) const {
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const StoredSite& site : sites_) {
    if (!site.statistics_only) sites.push_back(StoredSiteJson(site));
  }
  nlohmann::ordered_json metadata = {
      {"format", "actex-activations"},
      {"version", 1},
      {"complete", complete},
      {"config", nlohmann::ordered_json::parse(
                     run_config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))},
      {"sites", sites},
      {"dtype", dtype},
      {"shards", shards_},
      {"totals",
       {{"docs", stats_.docs},
        {"tokens", stats_.tokens},
        {"shards", stats_.shards},
        {"bytes", stats_.bytes}}}};
  metadata["chunks_without_documents"] = chunks_without_documents_;
  // null when not known; an object (maybe empty: integer sites only) otherwise
  nlohmann::ordered_json statistics =
      statistics_known_ ? nlohmann::ordered_json::object() : nlohmann::ordered_json();
  for (size_t i = 0; statistics_known_ && i < sites_.size(); ++i) {
    if (!sites_[i].integer) statistics[sites_[i].name] = statistics_[i].ToJson();
  }
  metadata["statistics"] = statistics;
  return metadata.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

namespace {

// Calls `take(entry)` for every chunk entry of `metadata` (its shards' and those
// without documents), after checking its shape: [chunk, documents] or [chunk,
// documents, digest].
std::expected<void, std::string> ForEachChunkEntry(
    const nlohmann::json& metadata, const std::function<void(const nlohmann::json&)>& take) {
  static const std::regex kDigest("[0-9a-f]{32}");
  auto add = [&take](const nlohmann::json& list) -> std::expected<void, std::string> {
    if (list.is_null()) return {};
    if (!list.is_array()) return std::unexpected("a chunk list is not an array: " + list.dump());
    for (const auto& entry : list) {
      const bool pair = entry.is_array() && (entry.size() == 2 || entry.size() == 3) &&
                        entry[0].is_number_integer() && entry[1].is_number_integer() &&
                        entry[0].get<int64_t>() >= 0 && entry[1].get<int64_t>() >= 1;
      if (!pair) return std::unexpected("a chunk entry is not [chunk, documents]: " + entry.dump());
      if (entry.size() == 3 &&
          (!entry[2].is_string() || !std::regex_match(entry[2].get<std::string>(), kDigest))) {
        return std::unexpected("a chunk entry's digest is not 32 lowercase hex digits: " +
                               entry.dump());
      }
      take(entry);
    }
    return {};
  };
  const nlohmann::json shards = metadata.is_object() && metadata.contains("shards")
                                    ? metadata["shards"]
                                    : nlohmann::json::array();
  if (!shards.is_array()) return std::unexpected(std::string("\"shards\" is not a list"));
  for (const auto& shard : shards) {
    if (!shard.is_object())
      return std::unexpected("a shard entry is not an object: " + shard.dump());
    if (auto added = add(shard.value("chunks", nlohmann::json())); !added) return added;
  }
  if (metadata.is_object() && metadata.contains("chunks_without_documents")) {
    return add(metadata["chunks_without_documents"]);
  }
  return {};
}

}  // namespace

std::expected<std::map<int64_t, int64_t>, std::string> ListedChunks(
    const nlohmann::json& metadata) {
  std::map<int64_t, int64_t> chunks;
  std::optional<int64_t> twice;
  auto checked = ForEachChunkEntry(metadata, [&](const nlohmann::json& entry) {
    if (!chunks.emplace(entry[0].get<int64_t>(), entry[1].get<int64_t>()).second && !twice) {
      twice = entry[0].get<int64_t>();
    }
  });
  if (!checked) return std::unexpected(checked.error());
  if (twice) return std::unexpected("chunk " + std::to_string(*twice) + " is listed twice");
  return chunks;
}

std::map<int64_t, std::string> ListedChunkDigests(const nlohmann::json& metadata) {
  std::map<int64_t, std::string> digests;
  (void)ForEachChunkEntry(metadata, [&](const nlohmann::json& entry) {
    if (entry.size() == 3) digests[entry[0].get<int64_t>()] = entry[2].get<std::string>();
  });
  return digests;
}

std::expected<std::vector<ListedShard>, std::string> ListedFilesOf(const nlohmann::json& shard,
                                                                   const JsonPlace& place) {
  const auto listed = [](const nlohmann::json& entry,
                         const JsonPlace& at) -> std::expected<ListedShard, std::string> {
    auto file = JsonStringField(entry, at, "file");
    if (!file) return std::unexpected(file.error());
    auto bytes = JsonIntField(entry, at, "bytes", 0);
    if (!bytes) return std::unexpected(bytes.error());
    auto crc32 = JsonStringField(entry, at, "crc32");
    if (!crc32) return std::unexpected(crc32.error());
    return ListedShard{*file, *bytes, *crc32};
  };
  auto own = listed(shard, place);
  if (!own) return std::unexpected(own.error());
  std::vector<ListedShard> files = {*own};
  if (!shard.contains("examples")) return files;
  auto examples = JsonObjectField(shard, place, "examples");
  if (!examples) return std::unexpected(examples.error());
  auto file = listed(examples->get(), place.Member("examples"));
  if (!file) return std::unexpected(file.error());
  files.push_back(*file);
  return files;
}

}  // namespace actex
