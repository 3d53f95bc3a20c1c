#include "actors/host_output.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "actors/extract_flag_table.h"
#include "actors/mesh_plan.h"
#include "storage/chunk_digest.h"
#include "storage/corpus_size.h"
#include "storage/earlier_output.h"
#include "storage/latent_sites.h"
#include "storage/shard_listing.h"
#include "storage/unlisted_shards.h"

namespace actex {

namespace {

WriterConfig MakeWriterConfig(const NodeOptions& options, const NodeResources& resources,
                              const std::string& host_dir) {
  WriterConfig writer;
  writer.host_id = options.host_id;
  writer.shards.dir = host_dir;
  writer.shards.shard_bytes = options.extract.shard_bytes;
  writer.shards.gzip = options.extract.gzip;
  writer.shards.dtype = resources.plan.dtype;
  writer.shards.seal_in_background = true;  // the next shard fills while one is sealed
  writer.shards.spill_threads = resources.plan.spill_threads;
  // The device shard sends the captured sites in plan order, then each SAE's latents.
  for (const Site& site : resources.plan.sites) {
    writer.shards.sites.push_back({site.HookName(), site.Width(resources.config), site.IsInteger(),
                                   resources.plan.IsStatisticsOnly(site)});
  }
  for (const PlannedSae& sae : resources.plan.saes) {
    for (StoredSite& latents : StoredLatentSites(sae.record.site, static_cast<int>(sae.k))) {
      writer.shards.sites.push_back(std::move(latents));
    }
    writer.shards.sae_latents[sae.record.site] = sae.record.d_sae;
  }
  writer.shards.sae_examples = options.extract.sae_examples;
  std::string stored_names;
  for (const StoredSite& site : writer.shards.sites) {
    if (!site.statistics_only) stored_names += (stored_names.empty() ? "" : ",") + site.name;
  }
  writer.shards.tensor_metadata = {{"model", resources.config.name},
                                   {"sites", stored_names},
                                   {"dtype", resources.plan.dtype_name},
                                   {"tokenizer_sha256", resources.tokenizer_hash}};
  writer.shards.run_config = ExtractOptionsToJson(options.extract, resources.plan);
  writer.shards.run_config["mesh"] = resources.mesh.Describe();
  writer.shards.run_config["num_hosts"] = options.num_hosts;
  writer.shards.run_config["host_id"] = options.host_id;
  writer.shards.run_config["machine_id"] = options.machine_id;
  writer.shards.run_config["total_machines"] = options.total_machines;
  writer.shards.run_config["corpus_size"] = resources.corpus_size.ToJson();
  if (resources.config.moe.experts > 0) {
    // Routing sites exist on these layers only: a reader sees why a dense layer has none.
    writer.shards.run_config["sparse_layers"] = SparseLayers(resources.config);
  }
  // What the model is, wherever its folder is: a resume compares these, not the path.
  writer.shards.run_config["model_fingerprint"] = {{"weights", resources.weights->fingerprint()},
                                                   {"tokenizer", resources.tokenizer_hash}};
  writer.shards.fail_after_bytes = options.extract.fail_after_bytes;
  writer.shards.chunks = resources.mesh.chunks;
  return writer;
}

// The corpus read now must hold what the listed chunks were computed from: every
// listed chunk (cut by `chunks`) with a digest is read again and compared, before
// any work.
std::expected<void, std::string> CheckSameCorpus(const ExtractOptions& extract, ChunkRule chunks,
                                                 const std::string& dir,
                                                 const EarlierOutput& earlier) {
  const std::map<int64_t, std::string> digests = ListedChunkDigests(earlier.metadata);
  if (digests.empty()) {
    if (!earlier.chunks.empty()) {
      spdlog::warn(
          "{}: its chunks were listed without corpus digests (an older actex); whether the "
          "corpus changed since cannot be checked",
          dir);
    }
    return {};
  }
  auto changed = FindChangedChunks(CorpusOptionsOf(extract), chunks, digests);
  if (!changed) return std::unexpected("--data: " + changed.error());
  if (changed->empty()) return {};
  return std::unexpected("--data: " + DescribeChangedChunks(dir, *changed) +
                         ". Resuming would mix documents of two corpora: run with the files "
                         "the output was written from, or give --overwrite to start anew");
}

}  // namespace

std::vector<int> SparseLayers(const ModelConfig& config) {
  std::vector<int> layers;
  for (int layer = 0; layer < config.layers; ++layer) {
    if (config.IsSparse(layer)) layers.push_back(layer);
  }
  return layers;
}

std::string SiteList(const std::vector<Site>& sites) {
  std::string list;
  for (const Site& site : sites) list += (list.empty() ? "" : ",") + site.HookName();
  return list;
}

std::expected<ReplicaStart, std::string> PrepareOutput(const ExtractOptions& extract,
                                                       WriterConfig& writer, bool leased) {
  const std::string& dir = writer.shards.dir;
  if (std::error_code error; extract.overwrite && std::filesystem::exists(dir, error)) {
    std::filesystem::remove_all(dir, error);
    if (error) return std::unexpected("--overwrite: cannot remove " + dir + ": " + error.message());
  }
  auto earlier = ReadEarlierOutput(dir);
  if (!earlier) return std::unexpected(earlier.error());
  const ChunkRule chunks = writer.shards.chunks;
  const ReplicaStart start = StartAfter(*earlier, chunks);
  if (!*earlier) return start;
  const EarlierOutput& found = **earlier;
  if (auto same = CheckSameRun(dir, found.metadata["config"], writer.shards.run_config, leased);
      !same) {
    return std::unexpected(same.error());
  }
  // A complete output computes nothing more: its corpus need not be read again.
  if (!start.complete) {
    if (auto same_corpus = CheckSameCorpus(extract, chunks, dir, found); !same_corpus) {
      return std::unexpected(same_corpus.error());
    }
  }
  // Unlisted shard files are set aside, never deleted: one may be the only copy of
  // documents whose metadata.json entry was lost.
  auto cleanup = SetAsideUnlisted(dir, found.listed_files);
  if (!cleanup) return std::unexpected(cleanup.error());
  // Rejects of unlisted chunks go, as their chunks are computed again.
  std::set<int64_t> listed;
  for (const auto& [chunk, documents] : found.chunks) listed.insert(chunk);
  if (auto kept = KeepRejectsOfListedChunks(dir + "/rejects.jsonl", listed, chunks); !kept) {
    return std::unexpected(kept.error());
  }
  writer.shards.continue_from = found.metadata;
  spdlog::info(
      "{}: {}; {} shard(s) kept, {} temporary file(s) removed, {} unlisted shard(s) "
      "set aside in {}/{}",
      dir,
      start.complete ? "already complete"
                     : "resuming at document " + std::to_string(start.first_doc),
      found.metadata["shards"].size(), cleanup->removed_tmp.size(), cleanup->set_aside.size(), dir,
      kUnlistedFolder);
  return start;
}

std::expected<OutputLock, OutputLock::Error> LockHostOutput(const NodeOptions& options) {
  return OutputLock::Acquire(
      options.extract.out_dir,
      HostFolderName(options.machine_id, options.total_machines, options.host_id));
}

UploaderConfig MakeUploaderConfig(const UploadOptions& upload, int host_id, WriterConfig& writer) {
  UploaderConfig uploader;
  uploader.upload = upload;
  uploader.host_dir = writer.shards.dir;
  uploader.host_id = host_id;
  uploader.requests_endpoint = "inproc://uploads";
  uploader.events_endpoint = writer.events_endpoint;
  writer.uploads_endpoint = uploader.requests_endpoint;
  if (writer.shards.continue_from.is_object()) {
    // ReadEarlierOutput checked every entry, so its files are there to read.
    for (const auto& shard : writer.shards.continue_from["shards"]) {
      const std::vector<ListedShard> files = ListedFilesOf(shard, {}).value();
      uploader.earlier_shards.insert(uploader.earlier_shards.end(), files.begin(), files.end());
    }
  }
  return uploader;
}

std::expected<WrittenReplica, std::string> PrepareWrittenReplica(const NodeOptions& options,
                                                                 const NodeResources& resources,
                                                                 const std::string& host_dir) {
  const MeshPlan& mesh = resources.mesh;
  WriterConfig writer = MakeWriterConfig(options, resources, host_dir);
  // The job's documents among the first `corpus_documents` (the one replica of a job
  // of one host computes them all; a leased host's total is not known up front).
  auto of_replica = [mesh, max_docs = options.extract.max_docs](int64_t corpus_documents) {
    if (max_docs >= 0) corpus_documents = std::min(corpus_documents, max_docs);
    return mesh.DocumentsOwned(corpus_documents);
  };
  if (auto documents = resources.corpus_size.documents()) {
    writer.docs_total = of_replica(*documents);
  } else {
    writer.docs_total_from_progress = [of_replica, size = resources.corpus_size](
                                          const CorpusProgressMessage& progress) -> int64_t {
      const std::optional<int64_t> documents =
          progress.finished ? std::optional<int64_t>(progress.next_doc_id)
                            : size.EstimateDocuments({progress.next_doc_id, progress.jsonl_docs,
                                                      progress.jsonl_bytes});
      return documents ? of_replica(*documents) : -1;
    };
  }
  auto start = PrepareOutput(options.extract, writer, mesh.Leased());
  if (!start) return std::unexpected(start.error());
  WrittenReplica written{std::move(writer), *start, 0, {}};
  const nlohmann::json& earlier = written.writer.shards.continue_from;
  if (earlier.is_object()) {
    for (const auto& shard : earlier["shards"]) {
      written.tokens_resumed += shard.value("tokens", int64_t{0});
    }
    auto chunks = ListedChunks(earlier);  // checked by ReadEarlierOutput
    if (!chunks) return std::unexpected(written.writer.shards.dir + ": " + chunks.error());
    for (const auto& [chunk, documents] : *chunks) written.listed_chunks.push_back(chunk);
  }
  return written;
}

}  // namespace actex
