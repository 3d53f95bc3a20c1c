#ifndef ACTEX_ACTORS_HOST_OUTPUT_H_
#define ACTEX_ACTORS_HOST_OUTPUT_H_

#include <expected>
#include <string>
#include <vector>

#include "actors/extract_options.h"
#include "actors/node_options.h"
#include "actors/node_resources.h"
#include "actors/replica_start.h"
#include "actors/uploader_actor.h"
#include "actors/writer_actor.h"
#include "storage/output_lock.h"

namespace actex {

// This host's output folder (writer.shards.dir): a fresh one, or an earlier run's to
// resume, checked against this run's options (writer.shards.run_config) and with what
// it left unlisted removed; --overwrite removes it first. Returns where the written
// replica starts; `writer` learns what to continue from. A `leased` job may resume
// with another host count (CheckSameRun).
std::expected<ReplicaStart, std::string> PrepareOutput(const ExtractOptions& extract,
                                                       WriterConfig& writer, bool leased);

// Takes the lock of this host's folder of --out (OutputLock, `OUT/.host_NN.lock`),
// to hold for the whole run: a second run on the same host folder is refused,
// naming the holder, before it touches anything there.
std::expected<OutputLock, OutputLock::Error> LockHostOutput(const NodeOptions& options);

// The sites as the shards' metadata names them: "blocks.20.hook_resid_post,...".
std::string SiteList(const std::vector<Site>& sites);

// The layers whose MLP is a mixture of experts, ascending: metadata.json's
// config.sparse_layers for a mixture-of-experts model, the only layers that have
// routing sites (a dense layer of qwen2_moe has none). Empty for a dense model.
std::vector<int> SparseLayers(const ModelConfig& config);

// The writer of this host's replica, held in `host_dir`: the shards' layout, tensor
// metadata and run config, the document total of a job of one host (exact, or
// estimated from the loader's progress through JSONL), and the folder prepared
// (PrepareOutput).
// The caller sets the writer's endpoints.
struct WrittenReplica {
  WriterConfig writer;
  ReplicaStart start;                  // where the replica resumes
  int64_t tokens_resumed = 0;          // listed by an earlier run, kept
  std::vector<int64_t> listed_chunks;  // by an earlier run, ascending
};
std::expected<WrittenReplica, std::string> PrepareWrittenReplica(const NodeOptions& options,
                                                                 const NodeResources& resources,
                                                                 const std::string& host_dir);

// The uploader of that folder, fed by `writer` (whose uploads endpoint it sets). It
// first goes through every shard an earlier run listed, in case that run's uploads
// did not all finish. Call after PrepareOutput.
UploaderConfig MakeUploaderConfig(const UploadOptions& upload, int host_id, WriterConfig& writer);

}  // namespace actex

#endif  // ACTEX_ACTORS_HOST_OUTPUT_H_
