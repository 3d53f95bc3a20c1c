#include "storage/shard_listing.h"

namespace actex {

ShardListing::ShardListing(std::vector<std::pair<std::string, int>> sites)
    : sites_(std::move(sites)) {
  for (const auto& site : sites_) statistics_.emplace_back(site.second);
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
  }
  if (earlier.contains("chunks_without_documents")) {
    chunks_without_documents_ =
        nlohmann::ordered_json::parse(earlier["chunks_without_documents"].dump());
  }
  const nlohmann::json& statistics = earlier.value("statistics", nlohmann::json());
  for (size_t i = 0; i < sites_.size(); ++i) {
    const auto& [name, width] = sites_[i];
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
  for (const auto& chunk : shard["chunks"]) listed_chunks_.insert(chunk[0].get<int64_t>());
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
    chunks_without_documents_.push_back(chunk);
  }
}

std::string ShardListing::MetadataText(bool complete, const nlohmann::json& run_config,
                                       const char* dtype) const {
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const auto& [name, width] : sites_) sites.push_back({{"name", name}, {"width", width}});
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
  nlohmann::ordered_json statistics;  // null when not known
  for (size_t i = 0; statistics_known_ && i < sites_.size(); ++i) {
    statistics[sites_[i].first] = statistics_[i].ToJson();
  }
  metadata["statistics"] = statistics;
  return metadata.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::expected<std::map<int64_t, int64_t>, std::string> ListedChunks(
    const nlohmann::json& metadata) {
  std::map<int64_t, int64_t> chunks;
  auto add = [&chunks](const nlohmann::json* list,
                       const std::string& where) -> std::expected<void, std::string> {
    if (list == nullptr || list->is_null()) return {};
    if (!list->is_array()) {
      return std::unexpected(where + " is not an array of chunks: " + list->dump());
    }
    for (const auto& entry : *list) {
      // [chunk, documents], or [chunk, documents, "digest"] where a digest follows.
      const bool pair = entry.is_array() && (entry.size() == 2 || entry.size() == 3) &&
                        entry[0].is_number_integer() && entry[1].is_number_integer() &&
                        entry[0].get<int64_t>() >= 0 && entry[1].get<int64_t>() >= 1 &&
                        (entry.size() == 2 || entry[2].is_string());
      if (!pair) return std::unexpected("a chunk entry is not [chunk, documents]: " + entry.dump());
      if (!chunks.emplace(entry[0].get<int64_t>(), entry[1].get<int64_t>()).second) {
        return std::unexpected("chunk " + entry[0].dump() + " is listed twice");
      }
    }
    return {};
  };
  auto member = [](const nlohmann::json& object, const char* key) -> const nlohmann::json* {
    if (!object.is_object()) return nullptr;
    auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
  };
  if (!metadata.is_object()) return std::unexpected(std::string("metadata is not an object"));
  const nlohmann::json* shards = member(metadata, "shards");
  if (shards != nullptr && !shards->is_null() && !shards->is_array()) {
    return std::unexpected("\"shards\" is not an array: " + shards->dump());
  }
  for (size_t i = 0; shards != nullptr && shards->is_array() && i < shards->size(); ++i) {
    const std::string where = "shards[" + std::to_string(i) + "].chunks";
    if (auto added = add(member((*shards)[i], "chunks"), where); !added) {
      return std::unexpected(added.error());
    }
  }
  if (auto added = add(member(metadata, "chunks_without_documents"), "chunks_without_documents");
      !added) {
    return std::unexpected(added.error());
  }
  return chunks;
}

}  // namespace actex
