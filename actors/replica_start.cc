#include "actors/replica_start.h"

#include <spdlog/spdlog.h>

#include "actors/extract_flag_table.h"
#include "actors/run_identity.h"

namespace actex {

ReplicaStart StartAfter(const std::optional<EarlierOutput>& earlier, ChunkRule chunks) {
  ReplicaStart start;
  if (!earlier) return start;
  if (earlier->complete) {
    start.complete = true;
    return start;
  }
  if (earlier->chunks.empty()) return start;  // nothing was listed: start afresh
  start.first_doc = chunks.FirstDoc(earlier->chunks.rbegin()->first + 1);
  return start;
}

namespace {

// "model=3" of "data=2,model=3": the shape of one replica.
std::string ReplicaShape(const nlohmann::json& mesh) {
  const std::string text = mesh.get<std::string>();
  const size_t model = text.find("model=");
  return model == std::string::npos ? text : text.substr(model);
}

}  // namespace

std::expected<void, std::string> CheckSameRun(const std::string& dir, const nlohmann::json& earlier,
                                              const nlohmann::json& now, bool leased) {
  // A leased run takes whatever chunks the folders list, in any order: they stay,
  // whoever computed them, with any host count and mesh.
  const bool mesh_may_change = leased;
  // The model and the corpus are compared as the files they are, whatever the paths'
  // spelling, before any other key: a changed --data also changes "corpus_size".
  if (auto inputs = CheckSameInputs(dir, earlier, now); !inputs) return inputs;
  // CheckSameInputs passed, so a recorded model_fingerprint equals this run's: the same
  // files, which in a folder of another name take that name (config.json's
  // _name_or_path, else the folder's) without being another model.
  const bool same_model_files = earlier.contains("model_fingerprint");
  for (const auto& [key, value] : now.items()) {
    if (mesh_may_change && (key == "num_hosts" || key == "mesh" || key == "shards")) continue;
    if (IsInputKey(key) || (key == "model" && same_model_files)) continue;
    // A key the earlier run did not record (its version had no such flag) had the
    // flag's default then (--precision: fp32).
    const nlohmann::json before =
        earlier.contains(key) ? earlier[key] : DefaultRecordOfConfigKey(key);
    if (before == value) continue;
    return std::unexpected(FlagOfConfigKey(key) + ": " + dir + " was written with " +
                           before.dump() + ", this run asks for " + value.dump() +
                           "; run the same command to resume it, or give --overwrite");
  }
  const std::string shape_before =
      earlier.contains("mesh") && earlier["mesh"].is_string() ? ReplicaShape(earlier["mesh"]) : "";
  const std::string shape_now =
      now.contains("mesh") && now["mesh"].is_string() ? ReplicaShape(now["mesh"]) : "";
  if (mesh_may_change && shape_before != shape_now) {
    spdlog::warn(
        "{} was written by replicas of {}, this run's are {}: the documents computed now sum "
        "over their shards in another order, so they agree with the listed ones within float "
        "rounding, not to the bit",
        dir, shape_before, shape_now);
  }
  return {};
}

}  // namespace actex
