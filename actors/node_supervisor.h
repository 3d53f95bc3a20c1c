#ifndef ACTEX_ACTORS_NODE_SUPERVISOR_H_
#define ACTEX_ACTORS_NODE_SUPERVISOR_H_

#include <atomic>
#include <chrono>
#include <expected>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actors/extraction_summary.h"
#include "transport/actor.h"
#include "transport/schema.h"

namespace actex {

class JobLink;
class LeaseLinks;

// SIGTERM and SIGINT as the node sees them: how many arrived and the last one's
// number. Written by a signal handler (lock-free atomics), read by the supervisor.
struct StopSignals {
  std::atomic<int> count{0};
  std::atomic<int> last{0};
};

// Watches a node's actors from the node's own thread: the first failure stops them
// all where they are (the writer listing the chunks that ended), events from the writer feed
// the progress line and are re-published to monitors, and the job link (when the job has several
// hosts) is serviced whenever its socket is readable or a poll slice passes, so heartbeats flow and
// an abort from another host stops this one too.
class NodeSupervisor {
 public:
  struct Options {
    int host_id = 0;
    int num_hosts = 1;  // stamped on every event, so monitors know whom to wait for
    bool show_progress = false;
    zmq::socket_t* events = nullptr;  // PULL: MonitorEventMessage from the writer
    JobLink* job = nullptr;           // null for a job of one host
    // A job of work leases (PROTOCOL.md "Leases"): the node relays the loader's lease
    // requests and the writer's listings to the coordinator, and its grants and acks
    // back. Such a host drains on its own like a job of one host: it needs no other
    // to finish its chunks. Null otherwise.
    LeaseLinks* leases = nullptr;
    // Null: signals are not watched. A first signal drains (see OnStopSignal), or in a
    // job of several hosts stops the pipeline where it is; --drain-timeout passing stops
    // it where it is too; a second signal stops every actor at once.
    const StopSignals* stop_signals = nullptr;
    // A stop signal drains this host alone (a leased job whose replicas each lie on
    // one host); otherwise a host of a job stops where it is, and the others of its
    // replica stop with it.
    bool drains_alone = false;
    std::chrono::milliseconds drain_timeout{20000};
  };

  // What an actor is asked to do when a stop signal comes: finish (the default: it
  // ends when its inputs end), drain (end its streams early where that loses
  // nothing: the tokenizers), or stop (the loader: nothing new is read). When the
  // pipeline is then stopped where it is (the drain is overdue, or the job has several
  // hosts), every actor stops but the writer, which is asked to drain: it lists the whole
  // documents it holds and ends (kListWhatIsWhole; otherwise as kFinish).
  enum class OnStopSignal { kFinish, kDrain, kStop, kListWhatIsWhole };

  explicit NodeSupervisor(Options options);
  ~NodeSupervisor();  // stops and joins whatever still runs

  std::expected<void, std::string> Add(std::expected<std::unique_ptr<Actor>, std::string> actor,
                                       OnStopSignal on_stop_signal = OnStopSignal::kFinish);
  // Like Add, for an actor that may outlive the pipeline (the uploader): Run() does
  // not wait for it, though its failure stops everything as any actor's does.
  std::expected<void, std::string> AddBackground(
      std::expected<std::unique_ptr<Actor>, std::string> actor);
  // Until every actor added with Add has finished; the first error (an actor's or
  // the job's).
  std::expected<void, std::string> Run();
  // After Run: until the background actors have finished too, relaying their events.
  // The job link is no longer serviced (the job has ended).
  std::expected<void, std::string> FinishBackground();
  // Stops every actor (they finish without listing their open shard).
  void StopAll();
  // After Run: whether a stop signal cut the run short, and how.
  RunEnding ending() const { return ending_; }

  // Publishes one of the node's own events ("started", "finished", "error").
  void Publish(const std::string& kind, const std::string& message);
  const MonitorEventMessage& last_event() const { return last_event_; }

 private:
  void DrainEvents();
  // Passes lease traffic between the actors and the job (see Options). Once the job
  // failed, listing intents are refused here: no coordinator can note them now.
  std::expected<void, std::string> RelayLeases(bool job_failed);
  // Acts on stop signals that arrived since the last look (see Options).
  void WatchStopSignals();
  // Stops every actor where it is, but has the writer list the chunks that ended.
  void StopWhereItIs();
  std::expected<void, std::string> RunUntilFinished(bool include_background, bool service_job);

  Options options_;
  std::vector<std::unique_ptr<Actor>> actors_;
  std::vector<bool> background_, finished_;   // per actor
  std::vector<OnStopSignal> on_stop_signal_;  // per actor
  MonitorEventMessage last_event_;
  RunEnding ending_ = RunEnding::kCompleted;
  std::chrono::steady_clock::time_point drain_deadline_;
  std::set<uint64_t> pending_listings_;  // intents sent, not yet acknowledged
};

}  // namespace actex

#endif  // ACTEX_ACTORS_NODE_SUPERVISOR_H_
