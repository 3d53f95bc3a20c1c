#ifndef ACTEX_COORDINATION_COORDINATOR_CLIENT_H_
#define ACTEX_COORDINATION_COORDINATOR_CLIENT_H_

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "coordination/lease_client.h"
#include "coordination/liveness.h"
#include "transport/connection_watch.h"
#include "transport/job_security.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {

struct CoordinatorClientOptions {
  // Where host 0's coordinator listens (what --coordinator names): an address or
  // host name, and the control port.
  std::string coordinator_address = "127.0.0.1";
  int port = 8476;
  // The coordinator's join_timeout; Join waits this plus join_margin for the
  // Welcome (the coordinator decides, the margin covers its Abort's travel).
  std::chrono::milliseconds join_timeout{300000};
  std::chrono::milliseconds join_margin{10000};
  Liveness liveness;  // the coordinator's own values
  // How long closing may still deliver the last messages (a Failure report).
  std::chrono::milliseconds linger{2000};
  // The job key: when set, the DEALER is a CURVE client (PROTOCOL.md section 10).
  // Null: plain tcp, for a coordinator without a key.
  std::shared_ptr<const JobSecurity> security;
  // Where the job's standby coordinator listens ("tcp://HOST:PORT",
  // --standby-coordinator), or empty. Join then says Hello there too, once every
  // heartbeat interval until it answers: a standby that took the job over from a
  // lost host 0 admits the node, one that did not stays silent while host 0 answers.
  std::string standby_endpoint;
};

// A node's side of the coordination protocol (PROTOCOL.md section 8): one DEALER
// connected to the coordinator's ROUTER. Join performs the rendezvous; afterwards
// the node's supervisor polls socket() beside its actors' pipes and calls Service()
// whenever it is readable and at least every heartbeat_interval, or blocks in
// Barrier. Every call is made from one thread at a time (the socket may move to
// another thread between calls, as ZeroMQ allows with a memory barrier).
//
// A node that joins a job whose host 0 was lost finds its standby coordinator at
// options.standby_endpoint, and stays with it.
//
// A job with a standby coordinator (kStandbyEndpointKey in the Welcome's table): once
// host 0's coordinator is lost, the client reattaches to the standby instead of
// failing, reporting what its host holds and listed; requests and listing intents
// still unanswered are sent again once the standby took over (its Welcome). The
// supervisor sees none of this: socket() stays the same socket.
//
// Once an Abort arrived or the coordinator was lost, every call returns that error
// again. Once the final barrier ("done") was released the job is over: Service()
// returns success without looking at the coordinator any more (which may be gone).
class CoordinatorClient : public LeaseClient {
 public:
  // Connects (ZeroMQ retries until the coordinator is up), sends `hello` and waits
  // for the Welcome, sending heartbeats meanwhile. Returns the Abort's reason as the
  // error when the coordinator refused the job, and "no answer from the coordinator
  // at ADDRESS:PORT within N s" when nothing came.
  static std::expected<std::unique_ptr<CoordinatorClient>, std::string> Join(
      zmq::context_t& context, const CoordinatorClientOptions& options, const HelloMessage& hello);
  ~CoordinatorClient() override;

  int host_id() const { return host_id_; }
  // Whether the coordinator it talks to is the standby: it reattached there, or
  // joined a job the standby had taken over.
  bool with_standby() const { return lost_primary_.has_value(); }
  // The Welcome's table: every host's named endpoints.
  const std::map<std::string, std::string>& endpoints() const { return endpoints_; }

  // Enters the barrier `name` and blocks until the coordinator releases it,
  // heartbeating meanwhile. Errors: the Abort's reason; "lost the coordinator
  // (host 0): ..."; "barrier 'NAME' was not released within N s".
  std::expected<void, std::string> Barrier(const std::string& name,
                                           std::chrono::milliseconds timeout);
  // The same in two halves, for a supervisor that keeps serving its actors while it
  // waits: EnterBarrier sends the arrival, Service() notes the release.
  std::expected<void, std::string> EnterBarrier(const std::string& name);
  bool BarrierReleased(const std::string& name) const;

  // The DEALER, for zmq::poll: readable when the coordinator sent something.
  zmq::socket_t& socket() { return socket_; }
  // Never blocks: sends a heartbeat when one is due, handles everything that
  // arrived (an Abort returns its reason), and checks the coordinator's liveness.
  std::expected<void, std::string> Service();
  // Tells the coordinator this host cannot go on (it aborts the job for everyone, or
  // goes on without the host's stop group); with `hand_over`, host 0 stops and its
  // coordinator hands the job to the standby. Best effort and non-blocking; the
  // linger delivers it while the socket closes.
  void ReportFailure(const std::string& reason, bool hand_over = false);

  // Work leases (LeaseClient): Service() collects the grants and acks. What the host
  // holds and asked is kept for a reattach to the standby.
  void RequestLease(const LeaseRequestMessage& request) override;
  void ReportListing(const ListingIntentMessage& intent) override;
  void ReportListed(const ChunksListedMessage& listed) override;
  std::vector<LeaseGrantMessage> TakeGrants() override;
  std::vector<ListingAckMessage> TakeListingAcks() override;

  // Messages from the coordinator that were dropped (malformed or unexpected).
  uint64_t dropped_messages() const { return dropped_messages_; }
  // Connections to the coordinator that ended during the ZeroMQ handshake: a
  // coordinator with another job key (or none when this node has one, or the reverse).
  uint64_t failed_handshakes() const { return failed_handshakes_; }

 private:
  using Clock = std::chrono::steady_clock;
  CoordinatorClient(const CoordinatorClientOptions& options, zmq::context_t& context,
                    const HelloMessage& hello, zmq::socket_t socket);
  // A DEALER towards `endpoint` with the settings every link to a coordinator has.
  static std::expected<zmq::socket_t, std::string> Connect(zmq::context_t& context,
                                                           const CoordinatorClientOptions& options,
                                                           const std::string& routing_id,
                                                           const std::string& endpoint);
  // Before the Welcome: says Hello to the standby again when due, and takes its
  // answer: a Welcome makes the standby this node's coordinator (AdoptStandby).
  void ServiceStandbyProbe(Clock::time_point now);
  // Closes the socket to the coordinator at once, dropping what it still queued, and
  // talks through `socket` (connected to the standby) from now on, watched as it was.
  std::expected<void, std::string> ReplaceSocket(zmq::socket_t socket);
  void AdoptStandby(WelcomeMessage welcome, Clock::time_point now);
  void CloseStandbyProbe();
  // Handles one message from the coordinator.
  void Handle(const ReceivedMessage& message);
  void Drop(const std::string& why);
  // Sends without blocking; a full queue drops the message (logged).
  template <typename T>
  void SendNow(const T& message) {
    if (auto sent = Send(socket_, message); !sent) {
      spdlog::warn("host {}: could not send {} to the coordinator at {}: {}", host_id_,
                   MessageTypeName(T::kType), CoordinatorName(), sent.error());
    }
  }
  // Waits up to `wait` for something to arrive, then services.
  std::expected<void, std::string> WaitAndService(std::chrono::milliseconds wait);
  std::string CoordinatorName() const;
  // Host 0's coordinator is lost for `reason`: reattaches to the standby when the job
  // has one (true), else false.
  bool Reattach(const std::string& reason, Clock::time_point now);
  // Host 0's heartbeat says its standby listens at `endpoint` now ("": it says nothing):
  // a standby that came back on new ports is where a reattach goes.
  void LearnStandby(const std::string& endpoint);
  // Sends again what host 0 may never have answered, and what was reported while
  // reattaching, once the standby took over.
  void ResendOpen();

  CoordinatorClientOptions options_;
  zmq::context_t* context_;
  HelloMessage hello_;
  int host_id_ = 0;
  zmq::socket_t socket_;
  // Until the Welcome, with a standby_endpoint: the Hello to the standby.
  std::optional<zmq::socket_t> standby_probe_;
  Clock::time_point next_standby_hello_{};
  // Declared after socket_, so it is destroyed (and stops watching) first.
  std::unique_ptr<ConnectionWatch> watch_;
  std::map<std::string, std::string> endpoints_;
  bool welcomed_ = false;
  bool finished_ = false;  // the final barrier was released
  std::optional<std::string> failure_;
  std::set<std::string> released_barriers_;
  std::vector<LeaseGrantMessage> grants_;  // arrived, not yet taken
  std::vector<ListingAckMessage> listing_acks_;
  // What the host holds and asked, for a reattach (followers' copies aside).
  std::map<uint64_t, LeaseRequestMessage> open_requests_;
  std::map<uint64_t, ListingIntentMessage> open_intents_;
  std::set<int64_t> held_;
  std::set<int64_t> listed_;
  std::set<std::string> entered_barriers_;
  std::vector<ChunksListedMessage> unsent_listed_;      // reported while reattaching
  std::string coordinator_endpoint_;                    // "tcp://HOST:PORT" it is connected to
  std::optional<std::string> lost_primary_;             // why host 0's coordinator was given up
  std::optional<Clock::time_point> reattach_deadline_;  // while waiting for the standby
  std::optional<Clock::time_point> last_message_;       // from the coordinator
  // When Service last ran: a silence spanning a longer gap is this process's, not the
  // coordinator's.
  std::optional<Clock::time_point> last_serviced_;
  std::optional<Clock::time_point> disconnected_at_;
  Clock::time_point next_heartbeat_{};
  uint64_t heartbeat_sequence_ = 0;
  uint64_t heard_sequence_ = 0;  // the newest of the coordinator's heartbeats
  uint64_t dropped_messages_ = 0;
  uint64_t failed_handshakes_ = 0;
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_COORDINATOR_CLIENT_H_
