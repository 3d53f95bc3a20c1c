#ifndef ACTEX_ACTORS_REPLICA_START_H_
#define ACTEX_ACTORS_REPLICA_START_H_

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "storage/chunk_rule.h"
#include "storage/earlier_output.h"

namespace actex {

// Where a replica's pipeline starts: at a chunk's first document, since a shard
// holds whole chunks and no batch holds two chunks' documents, so the resumed run
// forms exactly the batches an uninterrupted run formed from there on.
struct ReplicaStart {
  int64_t first_doc = 0;  // documents below this id are written (or not the replica's)
  bool complete = false;  // nothing is left to do
};

// The start of a replica whose writer's folder holds `earlier` (a fresh start when
// there is none): the first document of the chunk after the last one it listed.
// A replica lists its chunks in order, so everything before that one is listed.
ReplicaStart StartAfter(const std::optional<EarlierOutput>& earlier, ChunkRule chunks);

// Refuses to continue an earlier run made with other options; the error names the
// folder and the option ("--layers: OUT/host_00 was written with [20,21], this run
// asks for [20]"); the model and the corpus are compared as files, not as spelled
// paths (actors/run_identity.h). A `leased` run may have another host count, mesh and shards per
// host: what the folder lists stays, whoever computed it
// (with another replica width the new documents agree within float rounding, which
// is logged as a warning).
std::expected<void, std::string> CheckSameRun(const std::string& dir, const nlohmann::json& earlier,
                                              const nlohmann::json& now, bool leased);

}  // namespace actex

#endif  // ACTEX_ACTORS_REPLICA_START_H_
