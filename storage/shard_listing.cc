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
  if (earlier.contains("resume")) resume_ = earlier["resume"];
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

void ShardListing::List(nlohmann::ordered_json shard, const std::vector<SiteStatistics>& rows,
                        nlohmann::json resume) {
  ++stats_.shards;
  stats_.docs += shard.value("docs", int64_t{0});
  stats_.tokens += shard.value("tokens", int64_t{0});
  stats_.bytes += shard.value("bytes", int64_t{0});
  last_doc_id_ = shard.value("last_doc_id", last_doc_id_);
  shards_.push_back(std::move(shard));
  for (size_t i = 0; i < statistics_.size(); ++i) statistics_[i].Merge(rows[i]);
  resume_ = std::move(resume);
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
  if (!resume_.is_null()) metadata["resume"] = resume_;
  nlohmann::ordered_json statistics;  // null when not known
  for (size_t i = 0; statistics_known_ && i < sites_.size(); ++i) {
    statistics[sites_[i].first] = statistics_[i].ToJson();
  }
  metadata["statistics"] = statistics;
  return metadata.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace actex
