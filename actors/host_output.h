#ifndef ACTEX_ACTORS_HOST_OUTPUT_H_
#define ACTEX_ACTORS_HOST_OUTPUT_H_

#include <expected>
#include <string>

#include "actors/extract_options.h"
#include "actors/replica_start.h"
#include "actors/uploader_actor.h"
#include "actors/writer_actor.h"

namespace actex {

// This host's output folder (writer.shards.dir): a fresh one, or an earlier run's to
// resume, checked against this run's options (writer.shards.run_config) and with what
// it left unlisted removed; --overwrite removes it first. Returns where the written
// replica starts; `writer` learns what to continue from.
std::expected<ReplicaStart, std::string> PrepareOutput(const ExtractOptions& extract,
                                                       WriterConfig& writer);

// The uploader of that folder, fed by `writer` (whose uploads endpoint it sets). It
// first goes through every shard an earlier run listed, in case that run's uploads
// did not all finish. Call after PrepareOutput.
UploaderConfig MakeUploaderConfig(const UploadOptions& upload, int host_id, WriterConfig& writer);

}  // namespace actex

#endif  // ACTEX_ACTORS_HOST_OUTPUT_H_
