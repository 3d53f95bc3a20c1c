#ifndef ACTEX_COORDINATION_COORDINATOR_SESSION_H_
#define ACTEX_COORDINATION_COORDINATOR_SESSION_H_

#include <chrono>
#include <deque>
#include <expected>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordination/coordinator_options.h"
#include "coordination/rendezvous.h"
#include "transport/connection_watch.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {

// A message the coordinator must send to the ROUTER peer `identity`, or, with
// CoordinatorSession::kStandbyLink, over its link to the standby coordinator.
struct OutgoingMessage {
  std::string identity;
  MessageType type{};
  msgpack::sbuffer body;
};

// The coordinator's conversation with the nodes (PROTOCOL.md section 8) without
// sockets: it is fed what arrived and the time, and queues what to send. Its owner
// (coordinator.cc) does the I/O. Phases: rendezvous (Hello until all
// hosts joined), running (barriers, heartbeats, failures), ending (the final barrier
// was released or the job was aborted; late Hellos are answered with an Abort
// until final_drain has passed). Added hosts (ids from num_hosts to max_hosts - 1)
// join the running job, never the rendezvous.
//
// With a standby (CoordinatorOptions::standby_host) host 0's session replicates its
// lease log to it and holds back every lease answer until the standby confirmed the
// records behind it. The standby's own session (CoordinatorOptions::standby) starts
// in the standby phase: it keeps the copy, and once host 0 went silent it takes over
// the job with the hosts that reattach (PROTOCOL.md "Standby"). Not thread-safe.
class CoordinatorSession {
 public:
  using Clock = std::chrono::steady_clock;
  // OutgoingMessage::identity of what goes to the standby (never a ROUTER peer's:
  // ZeroMQ routing ids are never empty).
  static constexpr const char* kStandbyLink = "";

  // `options` must have passed StartCoordinator's checks; `counters` must outlive
  // the session.
  CoordinatorSession(const CoordinatorOptions& options, CoordinatorCounters& counters);

  void Start(Clock::time_point now);
  // The first call of every turn of the owner's loop, before any message of the turn
  // is handled. A turn comes at least every heartbeat interval: a gap past the
  // heartbeat timeout means this process did not run (frozen, or starved), the other
  // hosts took its host for lost meanwhile, and host 0's coordinator ends the job
  // saying so, before a message or a silence it did not witness could be taken for
  // a fault of its own hosts.
  void Resume(Clock::time_point now);
  // One message from the ROUTER peer `identity`, received over connection `fd`
  // (ZMQ_SRCFD) from `address`; an error is what Receive refused.
  void Handle(const std::string& identity, int fd, const std::string& address,
              const std::expected<ReceivedMessage, WireError>& message, Clock::time_point now);
  void OnConnectionEvent(const ConnectionEvent& event, Clock::time_point now);
  // Sends heartbeats that are due and enforces the join, heartbeat and disconnect
  // deadlines.
  void Tick(Clock::time_point now);
  // Ends the job: every node that said Hello gets an Abort with `reason`. Only the
  // first reason counts.
  void Abort(std::string reason, Clock::time_point now);

  // When Tick next has something to do.
  Clock::time_point NextDeadline() const;
  // True once the job ended and final_drain has passed.
  bool Finished(Clock::time_point now) const;
  // Success after the final barrier, else the reason the job was aborted.
  std::expected<void, std::string> result() const;
  std::vector<OutgoingMessage> TakeOutgoing();
  // What the coordinator itself tells monitors (a "lost" event per host the job goes
  // on without, PROTOCOL.md section 9), without the time: its owner stamps
  // unix_seconds and publishes them beside the nodes' events.
  std::vector<MonitorEventMessage> TakeMonitorEvents();
  // Host 0's: where the standby listens, once the rendezvous told; the owner then
  // connects the link that kStandbyLink messages go over.
  const std::optional<std::string>& standby_endpoint() const { return standby_endpoint_; }
  // A message from the standby over that link, and what happened to its connection.
  void HandleStandbyLink(const std::expected<ReceivedMessage, WireError>& message,
                         Clock::time_point now);
  void OnStandbyLinkEvent(const ConnectionEvent& event, Clock::time_point now);
  // The standby's: true once it took over the job from host 0.
  bool took_over() const { return coordinator_host_ != 0; }
  // Before every host joined: stopping the coordinator then ends no job that ran.
  bool in_rendezvous() const { return phase_ == Phase::kRendezvous; }

 private:
  enum class Phase { kStandby, kTakeover, kRendezvous, kRunning, kEnding };
  // A node that was admitted by the rendezvous.
  struct Host {
    std::string identity;
    int fd = -1;  // the connection its last message came over
    Clock::time_point last_message;
    std::optional<Clock::time_point> disconnected_at;  // its connection closed since
    // Barriers released before it came (a node that took a lost host's place) or
    // before the standby took over, which it passes at once.
    std::set<std::string> passed_barriers;
    uint64_t echoed = 0;  // the newest of our heartbeats it said it received
    // When a node that took a lost host's place was welcomed: it heard this
    // coordinator then, before any of our heartbeats.
    Clock::time_point welcomed{};
  };
  // A node joining the running job: one taking the place of a lost host (or of one
  // not yet found lost, for which it waits), or an added host.
  struct Joining {
    std::string identity;
    int fd = -1;
    std::string address;
    HelloMessage hello;
    bool gone = false;  // its connection closed while it waited: another may claim its id
  };

  template <typename T>
  static OutgoingMessage Encode(const std::string& identity, const T& message) {
    OutgoingMessage outgoing{identity, T::kType, {}};
    msgpack::pack(outgoing.body, message);
    return outgoing;
  }
  template <typename T>
  void Queue(const std::string& identity, const T& message) {
    outgoing_.push_back(Encode(identity, message));
  }
  // A lease answer: sent once the standby (if any) holds every record behind it.
  void QueueAnswer(OutgoingMessage answer);

  // Host 0's side of the standby (coordinator_session_standby.cc).
  // Links to the standby the table names (at the start, or when its host came back
  // with a new one) and replicates to it from record 0.
  void StartStandbyLink(Clock::time_point now);
  void ShipToStandby(Clock::time_point now);
  void ReleaseAnswers();
  // The standby is silent (`why`): the job goes on without one while most hosts are
  // still with host 0, else it ends (the standby may have taken over).
  void LoseStandby(const std::string& why, Clock::time_point now);
  // Host 0 leaves for `reason` (a stop signal): the standby takes the job over now,
  // and every node reattaches to it.
  void HandOver(std::string reason, Clock::time_point now);
  // Whether host `host_id` received a heartbeat (or its Welcome) we sent after
  // `since`: until `since` plus its heartbeat timeout it cannot have found us lost.
  bool HeardSince(int host_id, Clock::time_point since) const;
  // The standby's side.
  void HandleAsStandby(const std::string& identity, int fd, const std::string& address,
                       const ReceivedMessage& message, Clock::time_point now);
  void TickStandby(Clock::time_point now);
  // Ends the job when this process did not run for the heartbeat timeout since the
  // turn began (Resume): the frozen host's coordinator says so, and judges no host.
  void EndIfFrozen(Clock::time_point now);
  // Once the turn that started the job (the rendezvous completed, or the standby took
  // over) ended: the hosts' and the standby's silences count from `now`.
  void RestartClocks(Clock::time_point now);
  void BeginTakeover(std::string reason, Clock::time_point now);
  void FinishTakeover(Clock::time_point now);
  void OnHello(const std::string& identity, int fd, const std::string& address,
               const HelloMessage& hello, Clock::time_point now);
  // A Hello after the rendezvous, or an added host's at any time: a node taking the
  // place of a lost host alone in its stop group (or waiting until that host is found
  // lost), or an added host (waiting until the rendezvous completed); otherwise
  // dropped.
  void OnJoiningHello(Joining node, Clock::time_point now);
  void Readmit(int host_id, Joining node, Clock::time_point now);
  // Readmits the nodes waiting (returning_) for `host_id`'s stop group once none of
  // its hosts is in the job and a node came for each: a host alone in its group by
  // itself, the hosts of a replica that spans hosts together, with their new endpoints.
  void ReadmitWhenFree(int host_id, Clock::time_point now);
  std::string GroupText(int host_id) const;  // "2, 3": the hosts of its stop group
  void OnBarrier(int host_id, const ReceivedMessage& message, Clock::time_point now);
  // LeaseRequest (answered with a LeaseGrant) or ChunksListed.
  void OnLeaseMessage(int host_id, const ReceivedMessage& message, Clock::time_point now);
  // Sends `grant` to host `host_id`, and to its lease followers when it names a chunk
  // or says the job finished.
  void SendGrant(int host_id, LeaseGrantMessage grant);
  // Grants what became free to the hosts waiting for a chunk, or tells them the
  // job finished.
  void AnswerWaitingLeases(Clock::time_point now);
  void DropMalformed(const std::string& sender, const std::string& why);
  void DropUnexpected(const std::string& why);
  // The admitted host that `identity` belongs to, or -1.
  int HostOf(const std::string& identity) const;
  // How a host left the job: only one that fell silent may still be running, on the
  // far side of a split network; a closed connection or a Failure means its process
  // ended.
  enum class Departure { kSilent, kEnded };
  // A host lost or failed: the job ends (host 0's stop group), or goes on without its group.
  // Either way monitors are told (AnnounceLost).
  void LoseHost(int host_id, Departure departure, std::string reason, Clock::time_point now);
  // Queues the "lost" monitor event of host `host_id`: what it computed but did not
  // list is gone (or redone by others), so a monitor counts only what it listed.
  void AnnounceLost(int host_id, const std::string& reason);
  // The stop group of admitted host `host_id` (CoordinatorOptions::stop_groups), and
  // whether no other host shares it (true for any id outside the job's hosts).
  int GroupOf(int host_id) const;
  bool Alone(int host_id) const;
  // Forgets host `host_id` (lost, or gone after finishing its part; a host a standby
  // took the job over without was never linked to it).
  void RemoveHost(int host_id);
  // Whether `identity` is the link of a host lost by silence (silenced_): its process
  // still runs (it was frozen, or its network split and healed), so its first message
  // is answered by an Abort naming why the job went on without it: it stops at once
  // instead of working on what no longer counts until it takes the coordinator for
  // lost. What it sends after that is dropped.
  bool StopSilencedHost(const std::string& identity, const std::string& address, MessageType type);
  // Whether `identity` is the link of a host lost by silence at the final barrier
  // (frozen there, or cut off): its part was complete. Its first message takes it back
  // to the barrier while the job runs, where it is released with the others; once the
  // job ended it hears how (the release, or the Abort). Not when a node took its place.
  bool ReturnToFinalBarrier(const std::string& identity, int fd, const std::string& address,
                            Clock::time_point now);
  // Releases barrier `name` if every host still in the job arrived at it.
  void ReleaseIfAllArrived(const std::string& name, Clock::time_point now);
  // Releases every open barrier every host still in the job arrived at (one left it).
  void ReleaseOpenBarriers(Clock::time_point now);
  // The job ended with every chunk listed: leaves its record (FinishedJobRecord) in
  // options_.finished_record_folder, when there is one, for nodes started later.
  void RecordFinished();

  const CoordinatorOptions& options_;
  CoordinatorCounters& counters_;
  Rendezvous rendezvous_;
  Phase phase_ = Phase::kRendezvous;
  std::vector<std::optional<Host>> hosts_;         // by host id
  std::map<std::string, int> host_by_identity_;    // admitted peers
  std::set<std::string> refused_;                  // peers whose Hello ended the job
  std::map<std::string, std::set<int>> barriers_;  // name -> hosts arrived
  std::map<int, std::string> lost_;                // hosts the job went on without: why
  // Of those, the ones lost by silence, and when (LoseStandby counts them).
  std::map<int, Clock::time_point> silent_since_;
  std::set<int> stopped_with_replica_;  // of those, the ones this coordinator stopped
  std::map<int, Joining> returning_;    // by the host id whose place they take
  // The links of hosts lost by silence (StopSilencedHost).
  struct SilencedHost {
    int host_id = -1;
    bool told = false;              // its Abort is queued
    bool at_final_barrier = false;  // lost there, its part complete
  };
  std::map<std::string, SilencedHost> silenced_;
  std::set<std::string> released_barriers_;
  std::map<int, uint64_t> waiting_leases_;  // host -> its open LeaseRequest
  // After a takeover: chunks a host holds whose grants were lost with host 0; its
  // next requests get them.
  std::map<int, std::deque<int64_t>> owed_grants_;
  std::optional<std::string> abort_reason_;
  Clock::time_point started_{};
  Clock::time_point last_turn_{};    // when Resume last ran: a long gap is this process frozen
  bool turn_began_running_ = false;  // the phase was kRunning when Resume last ran
  Clock::time_point next_heartbeat_{};
  Clock::time_point ends_at_{};
  uint64_t heartbeat_sequence_ = 0;
  std::map<uint64_t, Clock::time_point> heartbeats_sent_;  // the newest, by sequence
  std::vector<OutgoingMessage> outgoing_;
  std::vector<MonitorEventMessage> monitor_events_;
  // The host whose node runs this coordinator: 0, or the standby's after a takeover.
  int coordinator_host_ = 0;

  // Host 0's link to its standby.
  struct HeldAnswer {
    uint64_t records = 0;  // the lease log's length when it was decided
    OutgoingMessage message;
  };
  std::optional<std::string> standby_endpoint_;
  bool standby_active_ = false;
  uint64_t shipped_ = 0;    // records sent to the standby
  uint64_t confirmed_ = 0;  // records the standby holds
  bool handing_over_ = false;
  bool standby_holds_joined_ = false;  // the rendezvous's hosts reached it
  Clock::time_point standby_heard_{};
  std::optional<Clock::time_point> standby_disconnected_at_;  // its link closed since
  Clock::time_point next_standby_update_{};
  std::deque<HeldAnswer> held_answers_;

  // The standby's view of the job it may take over.
  std::string primary_identity_;  // host 0's coordinator's link
  int primary_fd_ = -1;
  std::optional<Clock::time_point> primary_heard_;
  std::optional<Clock::time_point> primary_disconnected_at_;
  std::vector<int32_t> members_;    // the hosts in the job, as host 0 last said
  std::vector<JoinedHost> joined_;  // host 0's rendezvous, for nodes that come later
  int joined_max_hosts_ = 0;
  std::set<std::string> replicated_barriers_;
  std::map<int, std::pair<Joining, ReattachMessage>> reattached_;
  std::string takeover_reason_;
  Clock::time_point takeover_deadline_{};
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_COORDINATOR_SESSION_H_
