#include "actors/replica_start.h"

#include "actors/extract_flag_table.h"

namespace actex {

nlohmann::json ReplicaStart::ToJson() const {
  return {{"batch_doc", batch_doc},
          {"batch_offset", batch_offset},
          {"written_through", written_through},
          {"complete", complete}};
}

std::expected<ReplicaStart, std::string> ReplicaStart::FromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("batch_doc") || !json.contains("written_through")) {
    return std::unexpected("a resume point must hold batch_doc and written_through, got " +
                           json.dump());
  }
  ReplicaStart start;
  start.batch_doc = json["batch_doc"].get<int64_t>();
  start.batch_offset = json.value("batch_offset", 0);
  start.written_through = json["written_through"].get<int64_t>();
  start.complete = json.value("complete", false);
  return start;
}

ReplicaStart StartAfter(const std::optional<EarlierOutput>& earlier, int64_t chunk_docs) {
  ReplicaStart start;
  if (!earlier) return start;
  if (earlier->complete) {
    start.complete = true;
    start.written_through = earlier->last_doc_id;
    return start;
  }
  if (earlier->chunks.empty()) return start;  // nothing was listed: start afresh
  start.batch_doc = (earlier->chunks.rbegin()->first + 1) * chunk_docs;
  start.written_through = start.batch_doc - 1;
  return start;
}

std::expected<void, std::string> CheckSameRun(const std::string& dir, const nlohmann::json& earlier,
                                              const nlohmann::json& now) {
  for (const auto& [key, value] : now.items()) {
    const nlohmann::json before = earlier.contains(key) ? earlier[key] : nlohmann::json();
    if (before == value) continue;
    return std::unexpected(FlagOfConfigKey(key) + ": " + dir + " was written with " +
                           before.dump() + ", this run asks for " + value.dump() +
                           "; run the same command to resume it, or give --overwrite");
  }
  return {};
}

}  // namespace actex
