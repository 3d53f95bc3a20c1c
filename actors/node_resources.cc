#include "actors/node_resources.h"

#include <algorithm>

#include "actors/batch_memory.h"
#include "actors/run_fingerprint.h"
#include "model/config_reader.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "storage/corpus_reader.h"

namespace actex {

std::expected<NodeResources, std::string> PrepareNode(const NodeOptions& options) {
  NodeResources resources;
  const ExtractOptions& extract = options.extract;
  auto mesh = PlanMesh(options.mesh, options.num_hosts, extract.shards, options.machine_id,
                       options.total_machines, extract.chunk_docs);
  if (!mesh) return std::unexpected(mesh.error());
  resources.mesh = *mesh;
  const int max_hosts = std::max(options.max_hosts, options.num_hosts);
  // An added host must be a replica by itself to take chunks alone.
  if (max_hosts > options.num_hosts && !(mesh->Leased() && mesh->ReplicasWithinHosts())) {
    return std::unexpected("--max-hosts " + std::to_string(max_hosts) +
                           " needs a leased job whose hosts each hold whole replicas (--mesh "
                           "2d), so that an added host can take chunks alone; with --mesh " +
                           options.mesh + " a host's part is tied to other hosts");
  }
  if (options.max_hosts != 0 && options.max_hosts < options.num_hosts) {
    return std::unexpected("--max-hosts " + std::to_string(options.max_hosts) +
                           " is below --num-hosts " + std::to_string(options.num_hosts));
  }
  if (options.host_id < 0 || options.host_id >= max_hosts) {
    return std::unexpected("--host-id " + std::to_string(options.host_id) + " must be in [0, " +
                           std::to_string(max_hosts) + ")" +
                           (max_hosts > options.num_hosts ? " (--max-hosts)" : ""));
  }
  auto config = LoadModelConfig(extract.model_dir);
  if (!config) return std::unexpected(config.error());
  resources.config = *config;
  // A replica's shards split the heads, so it is the replica's size that must fit.
  ExtractOptions per_replica = extract;
  per_replica.shards = mesh->model;
  auto plan = PlanExtraction(per_replica, *config);
  if (!plan) return std::unexpected(plan.error());
  resources.plan = *plan;
  if (auto loaded =
          LoadPlannedSaes(resources.plan.saes, extract.sae_top_k, extract.sae_examples, *config);
      !loaded) {
    return std::unexpected(loaded.error());
  }
  // The plan counted one replica's shards; this host runs extract.shards of them.
  if (extract.blas_threads == 0) resources.plan.blas_threads = DefaultBlasThreads(extract.shards);
  const int local_replicas = extract.shards / mesh->model;
  if (extract.tokenizer_threads == 0) {
    resources.plan.tokenizer_threads =
        DefaultTokenizerThreads(resources.plan.devices, local_replicas);
  }
  resources.plan.spill_threads = DefaultSpillThreads(resources.plan.devices, local_replicas);
  if (auto fits = CheckBatchMemory(resources.plan, *config, extract.shards, mesh->model,
                                   extract.batch_tokens, UsableMemory::Find());
      !fits) {
    return std::unexpected(fits.error());
  }
  auto weights = ModelWeights::Open(extract.model_dir);
  if (!weights) return std::unexpected(weights.error());
  resources.weights = *weights;
  if (HasTokenizer(extract.model_dir)) {
    auto tokenizer = LoadTokenizer(extract.model_dir);
    if (!tokenizer) return std::unexpected(tokenizer.error());
    resources.tokenizer_hash = (*tokenizer)->file_hash();
  }
  auto corpus = CorpusReader::Open(CorpusOptions{extract.data, extract.text_field});
  if (!corpus) return std::unexpected(corpus.error());
  resources.corpus_files = (*corpus)->files();
  // Parquet footers are read (and a bad file refused) before any work starts.
  auto size = MeasureCorpus(resources.corpus_files, extract.text_field);
  if (!size) return std::unexpected(size.error());
  resources.corpus_size = *size;
  return resources;
}

std::map<std::string, std::string> NodeResources::Fingerprint(const ExtractOptions& options) const {
  return RunFingerprint(options, plan, mesh, weights->fingerprint(), tokenizer_hash, corpus_files);
}

}  // namespace actex
