#include "actors/node_pipeline.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "actors/batch_memory.h"
#include "actors/device_shard_actor.h"
#include "actors/job_link.h"
#include "actors/lease_links.h"
#include "actors/loader_actor.h"
#include "actors/tokenizer_actor.h"
#include "actors/uploader_actor.h"
#include "actors/writer_actor.h"
#include "coordination/job_leases.h"
#include "model/decoder_forward.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "storage/corpus_reader.h"
#include "transport/wire.h"

namespace actex {
namespace {

// The pipeline's inproc endpoints, each named once. The consumer binds (PULL), the
// producers connect (PUSH): device shards -> writer; loader and tokenizers -> writer.
constexpr const char* kActivationsEndpoint = "inproc://activations";
constexpr const char* kRejectsEndpoint = "inproc://rejects";

// A batch of a large model can take minutes per layer on a slow host; the ring
// waits that long for a peer. Liveness is the heartbeats' job, not this timeout's.
constexpr std::chrono::minutes kCollectiveTimeout{30};

// A document travels whole in one message: the longest line the reader passes (with
// its file name and fields) must fit a message body, or it would end the run at the
// send instead of being rejected with its file and line.
static_assert(kDefaultMaxLineBytes + (int64_t{1} << 20) <= kMaxBodyBytes);

// tokenizer -> one device shard (every shard of a replica gets every batch)
std::string BatchesEndpoint(int global_shard) {
  return "inproc://batches/" + std::to_string(global_shard);
}

// loader -> the tokenizer of one replica
std::string DocumentsEndpoint(int replica) {
  return "inproc://documents/" + std::to_string(replica);
}

// Starts the actors against the flow of data: uploader, writer, device shards,
// tokenizers, loader. Each binds its inbound endpoints before it reports ready
// (Actor::Start waits for that), so when a producer starts, whatever it connects to
// is already listening; and the loader, the source of all work, starts only once the
// whole pipeline stands, so no document waits on a half-built node. Between shards
// and tokenizers, a job of several hosts connects the rings: every shard must have
// announced its ring ingress first, and no batch may reach a shard before its ring
// is whole.
class PipelineStart {
 public:
  PipelineStart(const ExtractOptions& extract, const NodeResources& resources, HostShare share,
                PipelineLinks links)
      : extract_(extract), resources_(resources), share_(std::move(share)), links_(links) {}

  // Every actor, in that order; the first error.
  std::expected<void, std::string> Run();

 private:
  // The written replica's writer, and before it the uploader it feeds (--upload-cmd).
  std::expected<void, std::string> AddWriter();
  std::expected<void, std::string> AddDeviceShards();
  // The rendezvous: every host agrees on the run and learns where the ring peers
  // listen; a leased job's writer host tells the others which chunks its folder lists.
  std::expected<void, std::string> ConnectRings();
  // One tokenizer per local replica, each feeding every local shard of its replica.
  std::expected<void, std::string> AddTokenizers();
  // The loader of every local replica: in a leased job it reads the chunks granted to
  // each replica's writer host, otherwise the job's share from where it resumes.
  LoaderConfig LoaderOf() const;

  const ExtractOptions& extract_;
  const NodeResources& resources_;
  HostShare share_;
  PipelineLinks links_;
};

std::expected<void, std::string> PipelineStart::Run() {
  if (share_.written) {
    if (auto added = AddWriter(); !added) return added;
  }
  if (auto added = AddDeviceShards(); !added) return added;
  if (links_.job) {
    if (auto connected = ConnectRings(); !connected) return connected;
  }
  if (auto added = AddTokenizers(); !added) return added;
  return links_.supervisor.Add(StartLoader(links_.context, LoaderOf()),
                               NodeSupervisor::OnStopSignal::kDrain);
}

std::expected<void, std::string> PipelineStart::AddWriter() {
  WriterConfig writer = std::move(share_.written->writer);
  writer.activations_endpoint = kActivationsEndpoint;
  writer.rejects_endpoint = kRejectsEndpoint;
  writer.events_endpoint = kNodeEventsEndpoint;
  if (links_.leases) {
    links_.leases->ConfigureWriter(writer);
    // The host's share is whatever it is granted: the total it reports is the job's.
    writer.docs_total_of_job = true;
  }
  if (!extract_.upload.command.empty()) {
    auto started = links_.supervisor.AddBackground(
        StartUploader(links_.context, MakeUploaderConfig(extract_.upload, share_.host_id, writer)));
    if (!started) return started;
  }
  return links_.supervisor.Add(StartWriter(links_.context, std::move(writer)),
                               NodeSupervisor::OnStopSignal::kListWhatIsWhole);
}

std::expected<void, std::string> PipelineStart::AddDeviceShards() {
  const LargestBatch batch = LargestBatchOf(resources_.plan, extract_.batch_tokens);
  std::vector<ShardSlice> slices;
  std::vector<int64_t> forward_bytes_per_token;
  for (const LocalShard& local : share_.layout.shards()) {
    auto slice = PlanShard(resources_.config, local.rank, resources_.mesh.model);
    if (!slice) return std::unexpected(slice.error());
    slices.push_back(*slice);
    forward_bytes_per_token.push_back(ForwardBytesPerToken(resources_.config, *slice));
  }
  int local_index = 0;  // this host's shards take the planned GPUs in turn
  for (const LocalShard& local : share_.layout.shards()) {
    RingOptions ring;
    ring.ring = HostLayout::RingName(local.replica);
    ring.rank = local.rank;
    ring.endpoints = share_.layout.InitialEndpoints(local.replica);
    ring.timeout = kCollectiveTimeout;
    // tcp hops between hosts use the job key
    if (links_.job) ring.security = links_.job->security();
    DeviceShardConfig shard;
    shard.weights = resources_.weights;
    shard.slice = slices[static_cast<size_t>(local_index)];
    shard.sites = resources_.plan.sites;
    shard.saes = resources_.plan.saes;
    shard.make_device = resources_.plan.devices.MakerFor(
        local_index++, resources_.plan.blas_threads, batch, forward_bytes_per_token);
    shard.batches_endpoint = BatchesEndpoint(local.global_shard);
    shard.ring = ring;
    shard.activations_endpoint = kActivationsEndpoint;
    if (links_.job) shard.setup_endpoint = JobLink::kSetupEndpoint;
    auto started = links_.supervisor.Add(StartDeviceShard(links_.context, std::move(shard)));
    if (!started) return started;
  }
  return {};
}

std::expected<void, std::string> PipelineStart::ConnectRings() {
  std::map<std::string, std::string> published;
  if (links_.leases && share_.written) {
    published[JobLeases::ListedKey(share_.host_id)] =
        JobLeases::FormatChunks(share_.written->listed_chunks);
  }
  return links_.job->ConnectRings(share_.layout, resources_.Fingerprint(extract_), published);
}

std::expected<void, std::string> PipelineStart::AddTokenizers() {
  for (int replica : share_.layout.replicas()) {
    std::vector<std::unique_ptr<Tokenizer>> tokenizers;
    if (HasTokenizer(extract_.model_dir)) {
      for (int thread = 0; thread < resources_.plan.tokenizer_threads; ++thread) {
        auto loaded = LoadTokenizer(extract_.model_dir);
        if (!loaded) return std::unexpected(loaded.error());
        tokenizers.push_back(std::move(*loaded));
      }
    }
    std::vector<std::string> shard_endpoints;
    for (const LocalShard& local : share_.layout.shards()) {
      if (local.replica == replica) shard_endpoints.push_back(BatchesEndpoint(local.global_shard));
    }
    const bool written = replica == share_.layout.written_replica();
    auto started = links_.supervisor.Add(
        StartTokenizerActor(links_.context,
                            TokenizerActorConfig{
                                .tokenizers = std::move(tokenizers),
                                .model_dir = extract_.model_dir,
                                .vocab_size = resources_.config.vocab_size,
                                .bos_token_id = resources_.plan.bos_token_id,
                                .bos_on_pretokenized = resources_.plan.bos_on_pretokenized,
                                .packing = PackerOptions{.max_seq_len = resources_.plan.max_seq_len,
                                                         .overflow = extract_.overflow,
                                                         .batch_tokens = extract_.batch_tokens},
                                .documents_endpoint = DocumentsEndpoint(replica),
                                .shard_endpoints = shard_endpoints,
                                .rejects_endpoint = written ? kRejectsEndpoint : ""}),
        NodeSupervisor::OnStopSignal::kDrain);
    if (!started) return started;
  }
  return {};
}

LoaderConfig PipelineStart::LoaderOf() const {
  const MeshPlan& mesh = resources_.mesh;
  LoaderConfig loading;
  loading.corpus = CorpusOptionsOf(extract_);
  loading.chunks = mesh.chunks;
  for (int replica : share_.layout.replicas()) {
    loading.document_endpoints.push_back(DocumentsEndpoint(replica));
  }
  if (share_.written) loading.rejects_endpoint = kRejectsEndpoint;
  if (links_.leases) {
    loading.leasing = links_.leases->LoaderLeasing();
    loading.leasing->host = share_.host_id;
    for (int replica : share_.layout.replicas()) {
      loading.leasing->grant_holders.push_back(mesh.WriterHost(replica));
    }
    return loading;
  }
  // A job of one host: its one replica reads the job's share from where it resumes.
  const ReplicaStart start = share_.written ? share_.written->start : ReplicaStart{};
  loading.route = [mesh, start](int64_t doc_id) {
    if (start.complete || doc_id < start.first_doc || !mesh.OwnsDocument(doc_id)) return -1;
    return 0;
  };
  return loading;
}

}  // namespace

std::expected<void, std::string> StartPipeline(const ExtractOptions& extract,
                                               const NodeResources& resources, HostShare share,
                                               PipelineLinks links) {
  return PipelineStart(extract, resources, std::move(share), links).Run();
}

std::expected<HostShare, std::string> PrepareHostShare(const NodeOptions& options,
                                                       const NodeResources& resources,
                                                       ExtractionSummary& summary) {
  if (options.num_hosts > 1 && options.coordinator.empty()) {
    return std::unexpected("--coordinator HOST:PORT is needed when --num-hosts is above 1");
  }
  const MeshPlan& mesh = resources.mesh;
  HostShare share{.host_id = options.host_id,
                  .layout = HostLayout(mesh, options.host_id, JobLink::BindAddress(options)),
                  .written = std::nullopt};
  if (share.layout.written_replica() < 0) return share;
  summary.host_dir =
      (std::filesystem::path(options.extract.out_dir) / mesh.HostFolder(options.host_id)).string();
  auto written = PrepareWrittenReplica(options, resources, summary.host_dir);
  if (!written) return std::unexpected(written.error());
  summary.tokens_resumed = written->tokens_resumed;
  share.written = std::move(*written);
  return share;
}

}  // namespace actex
