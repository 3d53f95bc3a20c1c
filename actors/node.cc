#include "actors/node.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "actors/finished_job.h"
#include "actors/host_layout.h"
#include "actors/host_output.h"
#include "actors/job_end_latents.h"
#include "actors/job_link.h"
#include "actors/lease_links.h"
#include "actors/mesh_plan.h"
#include "actors/node_pipeline.h"
#include "actors/node_resources.h"
#include "actors/node_supervisor.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"
#include "transport/interrupted.h"

namespace actex {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One host's run from joining its job to its end. It holds what the run's actors are
// joined to: the ZeroMQ context, the events socket they report to, the lease links
// of a leased job, the link to the job's other hosts and the supervisor of the
// started actors. Members are destroyed in reverse order: the actors stop before the
// job link closes, and every socket closes before the context.
class NodeRun {
 public:
  // Binds the events socket and, in a leased job, the node's ends of the lease links.
  NodeRun(const NodeOptions& options, const NodeResources& resources, ExtractionSummary summary);

  // Takes part in the job: in a job of several hosts opens the link to the others
  // (the coordinator too, on host 0); then the supervisor that watches this host's
  // actors. An error ends the run before any actor started.
  std::expected<void, std::string> JoinJob();
  // Records and logs how long loading took (since `load_start`) and what this host runs.
  void ReportReady(Clock::time_point load_start, const HostLayout& layout);
  // Starts the pipeline (StartPipeline) and tells the monitors; the extraction's time
  // counts from here.
  std::expected<void, std::string> Start(HostShare share);
  // Supervises the actors until the pipeline ends; when it completed, and the job has
  // other hosts, waits at the final barrier until every host finished. Returns how
  // the run ended: kCompleted, a stop signal's ending, or kLeftFinalBarrier.
  std::expected<RunEnding, std::string> TakePart();

  // A completed run: on the host that ended the job, merges the job's latent examples
  // (--sae); waits for the uploads (they finish after the job did, so a host's slow
  // uploads hold up no other host), then sums up what the run did.
  std::expected<ExtractionSummary, std::string> Finish();
  // A run a stop signal ended (`ending`): what is listed stays, the job learns why this
  // host leaves (host 0 with a standby hands the job over), and the same command on
  // every host resumes.
  ExtractionSummary StoppedBySignal(RunEnding ending);
  // The wait at the final barrier failed with `error` (the coordinator lost: this host
  // was cut off, or frozen, when the barrier was released): its part is complete, so
  // when the job's record says the job finished the run completed; else `error`.
  std::expected<RunEnding, std::string> EndedUnlessJobFinished(const std::string& error);
  // Starting failed with `error`: when the job's record now says the job finished (host
  // 0's coordinator, lingering after the end, turned this node's Hello away), the
  // actors stop and the run ends as FindFinishedJob says, computing nothing; else Fail.
  std::expected<ExtractionSummary, std::string> FailUnlessJobFinished(const std::string& error);
  // Stops every actor and tells the other hosts and the monitors why the run failed.
  std::unexpected<std::string> Fail(const std::string& error);

 private:
  // Host 0 stopped by a signal hands the job over to the standby, when there is one.
  bool HandsOver() const;
  // Whether the job goes on when this host leaves early: leased, and outside host 0's
  // stop group (an added host is a group of its own), or host 0 handing the job over.
  bool JobGoesOnWithoutIt() const;

  const NodeOptions& options_;
  const NodeResources& resources_;
  ExtractionSummary summary_;
  bool uploads_ = false;    // --upload-cmd, on a host that writes
  bool ended_job_ = false;  // the job completed, and this host's coordinator ran its end
  Clock::time_point extract_start_;
  zmq::context_t context_;
  zmq::socket_t events_;  // PULL: the writer's and the uploader's events
  std::optional<LeaseLinks> leases_;
  std::unique_ptr<JobLink> job_;
  std::optional<NodeSupervisor> supervisor_;  // once the job is joined
};

NodeRun::NodeRun(const NodeOptions& options, const NodeResources& resources,
                 ExtractionSummary summary)
    : options_(options),
      resources_(resources),
      summary_(std::move(summary)),
      events_(context_, zmq::socket_type::pull) {
  events_.set(zmq::sockopt::linger, 0);
  RetryInterrupted([&] { events_.bind(kNodeEventsEndpoint); });
  // A leased job's host asks for chunks for the replica it writes, and follows the
  // grants of the writer hosts of the other replicas it holds shards of.
  if (resources_.mesh.Leased()) leases_.emplace(context_);
}

std::expected<void, std::string> NodeRun::JoinJob() {
  if (options_.num_hosts > 1) {
    auto joined = JobLink::Open(context_, options_, resources_.mesh);
    if (!joined) return std::unexpected(joined.error());
    job_ = std::move(*joined);
  }
  const ExtractOptions& extract = options_.extract;
  supervisor_.emplace(NodeSupervisor::Options{
      .host_id = options_.host_id,
      .num_hosts = options_.num_hosts,
      .show_progress = extract.show_progress,
      .events = &events_,
      .job = job_.get(),
      .leases = leases_ ? &*leases_ : nullptr,
      .stop_signals = options_.stop_signals,
      .drains_alone = resources_.mesh.Leased() && resources_.mesh.ReplicasWithinHosts(),
      .drain_timeout =
          std::chrono::milliseconds(static_cast<int64_t>(extract.drain_timeout_seconds * 1000))});
  return {};
}

void NodeRun::ReportReady(Clock::time_point load_start, const HostLayout& layout) {
  const ExtractPlan& plan = resources_.plan;
  summary_.load_seconds = SecondsSince(load_start);
  spdlog::info(
      "host {} of {}: model {} ({} layers, {} heads) ready in {:.2f} s; mesh {}, {} "
      "device shard(s) here on {}, {} thread(s) each, {} kernels, CPU products by {}; {} "
      "tokenizer thread(s) per replica; sites {}",
      options_.host_id, options_.num_hosts, resources_.config.name, resources_.config.layers,
      resources_.config.heads, summary_.load_seconds, resources_.mesh.Describe(),
      layout.shards().size(), plan.devices.Describe(), plan.blas_threads, IsaName(ActiveIsa()),
      GemmBackendName(PreferredGemmBackend(ActiveIsa())), plan.tokenizer_threads,
      SiteList(plan.sites));
  if (!plan.max_seq_len_note.empty()) spdlog::info("{}", plan.max_seq_len_note);
  if (auto warning = plan.devices.Warning()) spdlog::warn("{}", *warning);
}

std::expected<void, std::string> NodeRun::Start(HostShare share) {
  extract_start_ = Clock::now();
  uploads_ = share.written && !options_.extract.upload.command.empty();
  auto started = StartPipeline(options_.extract, resources_, std::move(share),
                               {.context = context_,
                                .supervisor = *supervisor_,
                                .job = job_.get(),
                                .leases = leases_ ? &*leases_ : nullptr});
  if (started) supervisor_->Publish("started", "");
  return started;
}

std::expected<RunEnding, std::string> NodeRun::TakePart() {
  if (auto ran = supervisor_->Run(); !ran) return std::unexpected(ran.error());
  if (supervisor_->ending() != RunEnding::kCompleted) return supervisor_->ending();
  // Before the final barrier: once it is released host 0's coordinator, and with it
  // the relay to the monitors, closes.
  supervisor_->Publish("finished", "");
  if (!job_) {
    ended_job_ = true;
    return RunEnding::kCompleted;
  }
  spdlog::info("host {}: its part is done; waiting for the other hosts to finish",
               options_.host_id);
  auto done = job_->FinishTogether(
      [&] { return options_.stop_signals != nullptr && options_.stop_signals->count.load() > 0; });
  if (!done) return EndedUnlessJobFinished(done.error());
  ended_job_ = *done == JobLink::Finish::kReleased && job_->Coordinating();
  return *done == JobLink::Finish::kLeft ? RunEnding::kLeftFinalBarrier : RunEnding::kCompleted;
}

std::expected<RunEnding, std::string> NodeRun::EndedUnlessJobFinished(const std::string& error) {
  auto finished = FindFinishedJob(options_, resources_);
  if (!finished || !*finished) return std::unexpected(error);
  spdlog::warn(
      "host {}: the job finished while this host was away from the final barrier, its part "
      "complete ({}); its wait there ended: {}",
      options_.host_id, (*finished)->record, error);
  return RunEnding::kCompleted;
}

std::expected<ExtractionSummary, std::string> NodeRun::Finish() {
  if (ended_job_) {
    const JobEndLatents latents = MergeLatentsAtJobEnd(options_, resources_.mesh);
    if (latents.written) spdlog::info("{}", latents.line);
    if (!latents.written && !latents.line.empty()) spdlog::warn("{}", latents.line);
  }
  if (auto uploaded = supervisor_->FinishBackground(); !uploaded) {
    return std::unexpected(uploaded.error());
  }
  if (uploads_) {
    if (auto whole = ExpectEverythingUploaded(summary_.host_dir); !whole) {
      return std::unexpected(whole.error());
    }
  }
  summary_.extract_seconds = SecondsSince(extract_start_);
  summary_.TakeCounts(supervisor_->last_event());
  summary_.max_reject_fraction = options_.extract.max_reject_fraction;
  // What is written is listed and stays: a folder that cannot be read back here only
  // costs the run its checks on rejects and non-finite values, which verify repeats.
  if (auto read = ReadFolderFindings(&summary_); !read) {
    spdlog::warn("cannot check the rejects and non-finite activations of {}: {}", summary_.host_dir,
                 read.error());
  }
  // Only what this run computed: the kept shards' tokens took no time now.
  const int64_t computed = summary_.tokens - summary_.tokens_resumed;
  summary_.tokens_per_second =
      summary_.extract_seconds > 0 && computed > 0 ? computed / summary_.extract_seconds : 0;
  return summary_;
}

ExtractionSummary NodeRun::StoppedBySignal(RunEnding ending) {
  const bool left_barrier = ending == RunEnding::kLeftFinalBarrier;
  summary_.ending = ending;
  summary_.stop_signal = options_.stop_signals->last.load();
  summary_.hands_over = HandsOver();
  // A host that left the final barrier had done its part, whatever the mesh; only
  // host 0 takes the coordinator, and so the job, with it.
  summary_.job_goes_on =
      left_barrier ? options_.host_id != 0 || summary_.hands_over : JobGoesOnWithoutIt();
  const std::string why =
      fmt::format("host {} stopped by signal {}{}", options_.host_id, summary_.stop_signal,
                  left_barrier ? " at the final barrier, its part complete" : "");
  if (job_) job_->ReportFailure(why, summary_.hands_over);
  supervisor_->Publish("stopped", why);
  summary_.TakeCounts(supervisor_->last_event());
  return summary_;
}

std::expected<ExtractionSummary, std::string> NodeRun::FailUnlessJobFinished(
    const std::string& error) {
  auto finished = FindFinishedJob(options_, resources_);
  if (!finished || !*finished) return Fail(error);
  supervisor_->StopAll();
  ExtractionSummary summary;
  summary.job_finished_before = FinishedBeforeStartLine(options_.host_id, **finished);
  return summary;
}

std::unexpected<std::string> NodeRun::Fail(const std::string& error) {
  supervisor_->StopAll();
  if (job_) job_->ReportFailure(error);
  supervisor_->Publish("error", error);
  return std::unexpected(error);
}

bool NodeRun::HandsOver() const {
  return options_.host_id == 0 && resources_.mesh.StandbyHost() >= 0;
}

bool NodeRun::JobGoesOnWithoutIt() const {
  const MeshPlan& mesh = resources_.mesh;
  if (HandsOver()) return true;
  if (!mesh.Leased()) return false;
  const std::vector<int> stop_groups = mesh.StopGroups();
  return options_.host_id >= mesh.hosts || stop_groups[options_.host_id] != stop_groups[0];
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
  ExtractionSummary summary;
  // Before this host's folder is touched: a node started after its job finished (a
  // pod's index started again, a requeue) has nothing to do, and no peer to ask.
  auto finished = FindFinishedJob(options, resources);
  if (!finished) return std::unexpected(finished.error());
  if (*finished) {
    summary.job_finished_before = FinishedBeforeStartLine(options.host_id, **finished);
    return summary;
  }
  auto share = PrepareHostShare(options, resources, summary);
  if (!share) return std::unexpected(share.error());
  NodeRun run(options, resources, std::move(summary));
  if (auto joined = run.JoinJob(); !joined) return std::unexpected(joined.error());
  run.ReportReady(load_start, share->layout);
  if (auto started = run.Start(std::move(*share)); !started) {
    return run.FailUnlessJobFinished(started.error());
  }
  auto ending = run.TakePart();
  if (!ending) return run.Fail(ending.error());
  if (*ending != RunEnding::kCompleted) return run.StoppedBySignal(*ending);
  return run.Finish();
}

std::expected<ExtractionSummary, std::string> RunExtraction(const ExtractOptions& options,
                                                            const StopSignals* stop_signals) {
  NodeOptions node;
  node.extract = options;
  node.stop_signals = stop_signals;
  return RunNode(node);
}

}  // namespace actex
