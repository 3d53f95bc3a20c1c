#include "actors/node.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "actors/device_shard_actor.h"
#include "actors/host_layout.h"
#include "actors/host_output.h"
#include "actors/job_link.h"
#include "actors/lease_links.h"
#include "actors/loader_actor.h"
#include "actors/mesh_plan.h"
#include "actors/node_resources.h"
#include "actors/node_supervisor.h"
#include "actors/replica_start.h"
#include "actors/run_fingerprint.h"
#include "actors/tokenizer_actor.h"
#include "actors/uploader_actor.h"
#include "actors/writer_actor.h"
#include "coordination/job_leases.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"
#include "model/model_weights.h"
#include "model/tokenizer/tokenizer_folder.h"
#include "storage/corpus_reader.h"
#include "storage/corpus_size.h"
#include "transport/interrupted.h"
#include "transport/wire.h"

namespace actex {
namespace {

// The node's inproc endpoints, each named once. The consumer binds (PULL), the
// producers connect (PUSH): device shards -> writer; loader and tokenizers -> writer;
// writer and uploader -> the supervisor.
constexpr const char* kActivationsEndpoint = "inproc://activations";
constexpr const char* kRejectsEndpoint = "inproc://rejects";
constexpr const char* kEventsEndpoint = "inproc://events";

using Clock = std::chrono::steady_clock;

// A batch of a large model can take minutes per layer on a slow host; the ring
// waits that long for a peer. Liveness is the heartbeats' job, not this timeout's.
constexpr std::chrono::minutes kCollectiveTimeout{30};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// tokenizer -> one device shard (every shard of a replica gets every batch)
std::string BatchesEndpoint(int global_shard) {
  return "inproc://batches/" + std::to_string(global_shard);
}

// loader -> the tokenizer of one replica
std::string DocumentsEndpoint(int replica) {
  return "inproc://documents/" + std::to_string(replica);
}

}  // namespace

std::expected<ExtractionSummary, std::string> RunNode(const NodeOptions& options) {
  const Clock::time_point load_start = Clock::now();
  auto prepared = PrepareNode(options);
  if (!prepared) return std::unexpected(prepared.error());
  return RunPreparedNode(options, *prepared, load_start);
}

std::expected<ExtractionSummary, std::string> RunPreparedNode(const NodeOptions& options,
                                                              const NodeResources& resources,
                                                              Clock::time_point load_start) {
  const ExtractOptions& extract = options.extract;
  const MeshPlan& mesh = resources.mesh;
  const bool multi_host = options.num_hosts > 1;
  if (multi_host && options.coordinator.empty()) {
    return std::unexpected("--coordinator HOST:PORT is needed when --num-hosts is above 1");
  }
  HostLayout layout(mesh, options.host_id, JobLink::BindAddress(options));

  ExtractionSummary summary;
  const bool writes = layout.written_replica() >= 0;
  if (writes) {
    summary.host_dir =
        (std::filesystem::path(extract.out_dir) / mesh.HostFolder(options.host_id)).string();
  }
  ReplicaStart start;  // where a job of one host resumes its share
  WriterConfig writer;
  std::vector<int64_t> listed_before;  // chunks an earlier run listed here
  if (writes) {
    auto written = PrepareWrittenReplica(options, resources, summary.host_dir);
    if (!written) return std::unexpected(written.error());
    writer = std::move(written->writer);
    writer.activations_endpoint = kActivationsEndpoint;
    writer.rejects_endpoint = kRejectsEndpoint;
    writer.events_endpoint = kEventsEndpoint;
    start = written->start;
    summary.tokens_resumed = written->tokens_resumed;
    listed_before = std::move(written->listed_chunks);
  }
  std::map<std::string, std::string> published;  // read by every host at the rendezvous
  zmq::context_t context;
  zmq::socket_t events(context, zmq::socket_type::pull);
  events.set(zmq::sockopt::linger, 0);
  RetryInterrupted([&] { events.bind(kEventsEndpoint); });
  // A leased job's host asks for chunks for the replica it writes, and follows the
  // grants of the writer hosts of the other replicas it holds shards of.
  const bool leased = mesh.Leased();
  std::optional<LeaseLinks> leases;
  if (leased) leases.emplace(context);
  if (leased && writes) {
    leases->ConfigureWriter(writer);
    // The host's share is whatever it is granted: no total is known up front.
    writer.docs_total = -1;
    writer.docs_total_from_progress = nullptr;
    published[JobLeases::ListedKey(options.host_id)] = JobLeases::FormatChunks(listed_before);
  }
  // Whether the job goes on when this host leaves early: leased, and outside host 0's
  // stop group (an added host is a group of its own), or host 0 handing the job over
  // to a standby.
  const std::vector<int> stop_groups = mesh.StopGroups();
  const bool hands_over = options.host_id == 0 && mesh.StandbyHost() >= 0;
  const bool job_goes_on_without_it =
      hands_over ||
      (leased && (options.host_id >= mesh.hosts || stop_groups[options.host_id] != stop_groups[0]));
  std::unique_ptr<JobLink> job;
  if (multi_host) {
    auto joined = JobLink::Open(context, options, mesh);
    if (!joined) return std::unexpected(joined.error());
    job = std::move(*joined);
  }
  summary.load_seconds = SecondsSince(load_start);
  spdlog::info(
      "host {} of {}: model {} ({} layers, {} heads) ready in {:.2f} s; mesh {}, {} "
      "device shard(s) here, {} thread(s) each, {} kernels, products by {}; sites {}",
      options.host_id, options.num_hosts, resources.config.name, resources.config.layers,
      resources.config.heads, summary.load_seconds, mesh.Describe(), layout.shards().size(),
      resources.plan.blas_threads, IsaName(ActiveIsa()),
      GemmBackendName(PreferredGemmBackend(ActiveIsa())), SiteList(resources.plan.sites));
  if (!resources.plan.max_seq_len_note.empty()) spdlog::info("{}", resources.plan.max_seq_len_note);

  NodeSupervisor supervisor({.host_id = options.host_id,
                             .num_hosts = options.num_hosts,
                             .show_progress = extract.show_progress,
                             .events = &events,
                             .job = job.get(),
                             .leases = leases ? &*leases : nullptr,
                             .stop_signals = options.stop_signals,
                             .drains_alone = leased && mesh.ReplicasWithinHosts(),
                             .drain_timeout = std::chrono::milliseconds(
                                 static_cast<int64_t>(extract.drain_timeout_seconds * 1000))});
  auto fail = [&](const std::string& error) -> std::expected<ExtractionSummary, std::string> {
    supervisor.StopAll();
    if (job) job->ReportFailure(error);
    supervisor.Publish("error", error);
    return std::unexpected(error);
  };

  // The actors start against the flow of data: uploader, writer, device shards,
  // tokenizers, loader. Each binds its inbound endpoints before it reports ready
  // (Actor::Start waits for that), so when a producer starts, whatever it connects to
  // is already listening; and the loader, the source of all work, starts only once the
  // whole pipeline stands, so no document waits on a half-built node. Between shards
  // and tokenizers, a job of several hosts connects the rings: every shard must have
  // announced its ring ingress first, and no batch may reach a shard before its ring
  // is whole.
  const Clock::time_point extract_start = Clock::now();
  std::expected<void, std::string> started;
  const bool uploads = writes && !extract.upload.command.empty();
  if (uploads) {
    started = supervisor.AddBackground(
        StartUploader(context, MakeUploaderConfig(extract.upload, options.host_id, writer)));
  }
  if (writes && started) {
    started = supervisor.Add(StartWriter(context, std::move(writer)),
                             NodeSupervisor::OnStopSignal::kListWhatIsWhole);
  }
  for (const LocalShard& local : layout.shards()) {
    if (!started) break;
    auto slice = PlanShard(resources.config, local.rank, mesh.model);
    if (!slice) return fail(slice.error());
    RingOptions ring;
    ring.ring = HostLayout::RingName(local.replica);
    ring.rank = local.rank;
    ring.endpoints = layout.InitialEndpoints(local.replica);
    ring.timeout = kCollectiveTimeout;
    if (job) ring.security = job->security();  // tcp hops between hosts use the job key
    DeviceShardConfig shard;
    shard.weights = resources.weights;
    shard.slice = *slice;
    shard.sites = resources.plan.sites;
    shard.blas_threads = resources.plan.blas_threads;
    shard.batches_endpoint = BatchesEndpoint(local.global_shard);
    shard.ring = ring;
    shard.activations_endpoint = kActivationsEndpoint;
    if (job) shard.setup_endpoint = JobLink::kSetupEndpoint;
    started = supervisor.Add(StartDeviceShard(context, std::move(shard)));
  }
  if (started && job) {
    started = job->ConnectRings(
        layout,
        RunFingerprint(extract, resources.plan, mesh, resources.weights->fingerprint(),
                       resources.tokenizer_hash, resources.corpus_files),
        published);
  }
  for (int replica : layout.replicas()) {
    if (!started) break;
    std::unique_ptr<Tokenizer> tokenizer;
    if (HasTokenizer(extract.model_dir)) {
      auto loaded = LoadTokenizer(extract.model_dir);
      if (!loaded) return fail(loaded.error());
      tokenizer = std::move(*loaded);
    }
    std::vector<std::string> shard_endpoints;
    for (const LocalShard& local : layout.shards()) {
      if (local.replica == replica) shard_endpoints.push_back(BatchesEndpoint(local.global_shard));
    }
    started = supervisor.Add(
        StartTokenizerActor(
            context,
            TokenizerActorConfig{
                .tokenizer = std::move(tokenizer),
                .model_dir = extract.model_dir,
                .vocab_size = resources.config.vocab_size,
                .bos_token_id = resources.plan.bos_token_id,
                .bos_on_pretokenized = resources.plan.bos_on_pretokenized,
                .packing = PackerOptions{.max_seq_len = resources.plan.max_seq_len,
                                         .overflow = extract.overflow,
                                         .batch_tokens = extract.batch_tokens},
                .documents_endpoint = DocumentsEndpoint(replica),
                .shard_endpoints = shard_endpoints,
                .rejects_endpoint = replica == layout.written_replica() ? kRejectsEndpoint : ""}),
        NodeSupervisor::OnStopSignal::kDrain);
  }
  if (started) {
    LoaderConfig loading;
    loading.corpus = CorpusOptionsOf(extract);
    // A document travels whole in one message: the longest line the reader passes
    // (with its file name and fields) must fit a message body, or it would end the
    // run at the send instead of being rejected with its file and line.
    static_assert(kDefaultMaxLineBytes + (int64_t{1} << 20) <= kMaxBodyBytes);
    loading.chunks = mesh.chunks;
    for (int replica : layout.replicas())
      loading.document_endpoints.push_back(DocumentsEndpoint(replica));
    if (writes) loading.rejects_endpoint = kRejectsEndpoint;
    if (leases) {
      loading.leasing = leases->LoaderLeasing();
      loading.leasing->host = options.host_id;
      for (int replica : layout.replicas()) {
        loading.leasing->grant_holders.push_back(mesh.WriterHost(replica));
      }
    } else {
      // A job of one host: its one replica reads the job's share from where it resumes.
      loading.route = [mesh, start](int64_t doc_id) {
        if (start.complete || doc_id < start.first_doc || !mesh.OwnsDocument(doc_id)) return -1;
        return 0;
      };
    }
    started = supervisor.Add(StartLoader(context, std::move(loading)),
                             NodeSupervisor::OnStopSignal::kDrain);
  }
  if (!started) return fail(started.error());
  supervisor.Publish("started", "");

  if (auto ran = supervisor.Run(); !ran) return fail(ran.error());
  if (supervisor.ending() != RunEnding::kCompleted) {
    // Preempted: what is listed stays; the other hosts of a job stop too, and the
    // same command on every host resumes.
    summary.ending = supervisor.ending();
    summary.stop_signal = options.stop_signals->last.load();
    summary.job_goes_on = job_goes_on_without_it;
    summary.hands_over = hands_over;
    const std::string why = "host " + std::to_string(options.host_id) + " stopped by signal " +
                            std::to_string(summary.stop_signal);
    if (job) job->ReportFailure(why, hands_over);
    supervisor.Publish("stopped", why);
    summary.TakeCounts(supervisor.last_event());
    return summary;
  }
  // Before the final barrier: once it is released host 0's coordinator, and with it
  // the relay to the monitors, closes.
  supervisor.Publish("finished", "");
  if (job) {
    spdlog::info("host {}: its part is done; waiting for the other hosts to finish",
                 options.host_id);
    auto done = job->FinishTogether(
        [&] { return options.stop_signals != nullptr && options.stop_signals->count.load() > 0; });
    if (!done) return fail(done.error());
    if (*done == JobLink::Finish::kLeft) {
      // Its part is complete and listed: the job goes on without it, except that
      // host 0 takes the coordinator, and so the job, with it.
      summary.ending = RunEnding::kLeftFinalBarrier;
      summary.stop_signal = options.stop_signals->last.load();
      // Its part is done, whatever the mesh.
      summary.job_goes_on = options.host_id != 0 || hands_over;
      summary.hands_over = hands_over;
      const std::string why =
          fmt::format("host {} stopped by signal {} at the final barrier, its part complete",
                      options.host_id, summary.stop_signal);
      job->ReportFailure(why, hands_over);
      supervisor.Publish("stopped", why);
      summary.TakeCounts(supervisor.last_event());
      return summary;
    }
  }
  // Uploads finish after the job did: a host's slow uploads hold up no other host.
  if (auto uploaded = supervisor.FinishBackground(); !uploaded) {
    return std::unexpected(uploaded.error());
  }
  if (uploads) {
    if (auto whole = ExpectEverythingUploaded(summary.host_dir); !whole) {
      return std::unexpected(whole.error());
    }
  }
  summary.extract_seconds = SecondsSince(extract_start);
  summary.TakeCounts(supervisor.last_event());
  summary.max_reject_fraction = extract.max_reject_fraction;
  // What is written is listed and stays: a folder that cannot be read back here only
  // costs the run its checks on rejects and non-finite values, which verify repeats.
  if (auto read = ReadFolderFindings(&summary); !read) {
    spdlog::warn("cannot check the rejects and non-finite activations of {}: {}", summary.host_dir,
                 read.error());
  }
  // Only what this run computed: the kept shards' tokens took no time now.
  const int64_t computed = summary.tokens - summary.tokens_resumed;
  summary.tokens_per_second =
      summary.extract_seconds > 0 && computed > 0 ? computed / summary.extract_seconds : 0;
  return summary;
}

std::expected<ExtractionSummary, std::string> RunExtraction(const ExtractOptions& options,
                                                            const StopSignals* stop_signals) {
  NodeOptions node;
  node.extract = options;
  node.stop_signals = stop_signals;
  return RunNode(node);
}

}  // namespace actex
