#ifndef ACTEX_STORAGE_SHARD_LISTING_H_
#define ACTEX_STORAGE_SHARD_LISTING_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "storage/shard_writer.h"
#include "storage/site_statistics.h"

namespace actex {

// What a host folder's metadata.json says about its shards: each listed shard
// (file, first and last doc id, docs, tokens, bytes, crc32), their totals, where a
// later run resumes, and per-site statistics over exactly the listed rows, so a
// resumed run continues them from what is listed and nothing else.
class ShardListing {
 public:
  explicit ShardListing(std::vector<std::pair<std::string, int>> sites);

  // Takes over an earlier run's metadata.json: its shards stay listed first. Its
  // statistics become unknown (null) when it has none for a listed site.
  void ContinueFrom(const nlohmann::json& earlier);

  // Lists a shard just written; `rows` are its per-site statistics and `resume`
  // where a run that stops now would start again.
  void List(nlohmann::ordered_json shard, const std::vector<SiteStatistics>& rows,
            nlohmann::json resume);

  // metadata.json as it stands, "complete": `complete`.
  std::string MetadataText(bool complete, const nlohmann::json& run_config,
                           const char* dtype) const;

  const ShardStats& stats() const { return stats_; }
  const nlohmann::ordered_json& shards() const { return shards_; }
  int64_t last_doc_id() const { return last_doc_id_; }  // -1: none listed

 private:
  std::vector<std::pair<std::string, int>> sites_;
  nlohmann::ordered_json shards_ = nlohmann::ordered_json::array();
  ShardStats stats_;
  int64_t last_doc_id_ = -1;
  nlohmann::json resume_;
  std::vector<SiteStatistics> statistics_;
  bool statistics_known_ = true;  // false when continuing an output written without them
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_LISTING_H_
