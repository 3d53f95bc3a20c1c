#include "coordination/coordinator_session.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "base/log_sampling.h"

namespace actex {

CoordinatorSession::CoordinatorSession(const CoordinatorOptions& options,
                                       CoordinatorCounters& counters)
    : options_(options),
      counters_(counters),
      rendezvous_(options.num_hosts, options.max_hosts),
      hosts_(rendezvous_.max_hosts()) {}

std::vector<OutgoingMessage> CoordinatorSession::TakeOutgoing() { return std::move(outgoing_); }

std::vector<MonitorEventMessage> CoordinatorSession::TakeMonitorEvents() {
  return std::exchange(monitor_events_, {});
}

void CoordinatorSession::Start(Clock::time_point now) {
  started_ = now;
  last_turn_ = now;
  if (options_.standby) phase_ = Phase::kStandby;
  next_heartbeat_ = now + options_.liveness.heartbeat_interval;
}

int CoordinatorSession::HostOf(const std::string& identity) const {
  const auto found = host_by_identity_.find(identity);
  return found == host_by_identity_.end() ? -1 : found->second;
}

void CoordinatorSession::DropMalformed(const std::string& sender, const std::string& why) {
  const uint64_t count = ++counters_.malformed_messages;
  if (ShouldLogOccurrence(count)) {
    spdlog::warn("coordinator: dropped a message from {} ({} malformed so far): {}", sender, count,
                 why);
  }
}

void CoordinatorSession::DropUnexpected(const std::string& why) {
  const uint64_t count = ++counters_.unexpected_messages;
  if (ShouldLogOccurrence(count)) {
    spdlog::warn("coordinator: dropped {} ({} unexpected so far)", why, count);
  }
}

void CoordinatorSession::Handle(const std::string& identity, int fd, const std::string& address,
                                const std::expected<ReceivedMessage, WireError>& message,
                                Clock::time_point now) {
  EndIfFrozen(now);  // a message read after a freeze within this turn is judged after it
  const int host_id = HostOf(identity);
  if (host_id >= 0) {
    // Whatever a known node sends, even garbage, shows it is alive.
    Host& host = *hosts_[host_id];
    host.last_message = now;
    if (fd >= 0) host.fd = fd;
    host.disconnected_at.reset();
  }
  const std::string sender =
      host_id >= 0 ? fmt::format("host {}", host_id) : fmt::format("a stranger at {}", address);
  if (!message) return DropMalformed(sender, message.error().message);
  const MessageType type = message->type;
  if (host_id < 0 && ReturnToFinalBarrier(identity, fd, address, now)) return;
  if (host_id < 0 && StopSilencedHost(identity, address, type)) return;

  if (phase_ == Phase::kStandby || phase_ == Phase::kTakeover) {
    return HandleAsStandby(identity, fd, address, *message, now);
  }
  if (phase_ == Phase::kEnding) {
    // A node that comes after the end learns why; the rest no longer matters.
    // (A standby that never took over had no job to end: host 0 answers.)
    if (type == MessageType::kHello && host_id < 0 && (!options_.standby || took_over())) {
      Queue(identity, AbortMessage{abort_reason_.value_or(
                          "the job finished before this node joined: nothing is left to do")});
    }
    return;
  }
  switch (type) {
    case MessageType::kHello: {
      if (host_id >= 0) return DropUnexpected(fmt::format("a second Hello from {}", sender));
      auto hello = message->As<HelloMessage>();
      if (!hello) return DropMalformed(sender, hello.error());
      if (took_over() && !rendezvous_.complete()) {
        return Queue(identity, AbortMessage{fmt::format(
                                   "host {}: the standby coordinator on host {} took the job over "
                                   "from host 0 without host 0's rendezvous and admits no node; "
                                   "run its command again once the job ended",
                                   hello->host_id, coordinator_host_)});
      }
      if (phase_ == Phase::kRendezvous && !rendezvous_.is_added(hello->host_id)) {
        return OnHello(identity, fd, address, *hello, now);
      }
      return OnJoiningHello({identity, fd, address, std::move(*hello)}, now);
    }
    case MessageType::kHeartbeat: {
      if (host_id < 0) return DropUnexpected(fmt::format("a Heartbeat from {}", sender));
      auto heartbeat = message->As<HeartbeatMessage>();
      if (!heartbeat) return DropMalformed(sender, heartbeat.error());
      Host& host = *hosts_[host_id];
      host.echoed = std::max(host.echoed, heartbeat->echo);
      return;
    }
    case MessageType::kBarrier:
      if (host_id < 0) return DropUnexpected(fmt::format("a Barrier from {}", sender));
      if (phase_ != Phase::kRunning) {
        return DropUnexpected(fmt::format("a Barrier from {} during the rendezvous", sender));
      }
      return OnBarrier(host_id, *message, now);
    case MessageType::kFailure: {
      if (host_id < 0) return DropUnexpected(fmt::format("a Failure from {}", sender));
      auto failure = message->As<FailureMessage>();
      if (!failure) return DropMalformed(sender, failure.error());
      // The host id is the one the node joined with, whatever the message claims.
      if (failure->hand_over && host_id == 0 && standby_active_) {
        return HandOver(fmt::format("host 0 left: {}", failure->reason), now);
      }
      return LoseHost(host_id, Departure::kEnded,
                      fmt::format("host {} failed: {}", host_id, failure->reason), now);
    }
    case MessageType::kLeaseRequest:
    case MessageType::kListingIntent:
    case MessageType::kChunksListed:
      if (host_id < 0 || !options_.leases || phase_ != Phase::kRunning) {
        return DropUnexpected(fmt::format("a {} message from {}", MessageTypeName(type), sender));
      }
      return OnLeaseMessage(host_id, *message, now);
    case MessageType::kReattach:
      return Queue(identity, AbortMessage{fmt::format(
                                 "{} came to the standby coordinator after it took over the job "
                                 "without it; run its command again once the job ended",
                                 sender)});
    default:
      return DropUnexpected(fmt::format("a {} message from {}", MessageTypeName(type), sender));
  }
}

void CoordinatorSession::OnConnectionEvent(const ConnectionEvent& event, Clock::time_point now) {
  if (event.kind == ConnectionEvent::Kind::kHandshakeFailed) {
    const uint64_t count = ++counters_.refused_connections;
    if (ShouldLogOccurrence(count)) {
      spdlog::warn(
          "coordinator: refused a connection on {} that failed the ZeroMQ handshake: not "
          "ZeroMQ, or without this job's key ({} so far)",
          event.endpoint, count);
    }
    return;
  }
  if (event.kind != ConnectionEvent::Kind::kDisconnected || phase_ == Phase::kEnding) return;
  if (phase_ == Phase::kStandby) {
    if (event.value == primary_fd_ && primary_heard_ && !primary_disconnected_at_) {
      primary_disconnected_at_ = now;
    }
    return;
  }
  for (size_t id = 0; id < hosts_.size(); ++id) {
    if (!hosts_[id] || hosts_[id]->fd != event.value || hosts_[id]->disconnected_at) continue;
    hosts_[id]->disconnected_at = now;
    spdlog::warn("coordinator: host {}'s connection closed; waiting {} for it to come back", id,
                 SecondsText(options_.liveness.disconnect_grace));
  }
  for (auto& [host_id, node] : returning_) {
    if (node.fd == event.value) node.gone = true;
  }
}

void CoordinatorSession::Abort(std::string reason, Clock::time_point now) {
  if (phase_ == Phase::kEnding) return;
  if (phase_ == Phase::kStandby) {  // a standby that never took over: no job to end
    spdlog::debug("coordinator (standby): stopped: {}", reason);
    abort_reason_ = std::move(reason);
    phase_ = Phase::kEnding;
    ends_at_ = now;
    return;
  }
  spdlog::error("coordinator: ending the job: {}", reason);
  for (const auto& host : hosts_) {
    if (host) Queue(host->identity, AbortMessage{reason});
  }
  for (const std::string& identity : refused_) Queue(identity, AbortMessage{reason});
  abort_reason_ = std::move(reason);
  phase_ = Phase::kEnding;
  ends_at_ = now + options_.final_drain;
}

bool CoordinatorSession::Finished(Clock::time_point now) const {
  return phase_ == Phase::kEnding && now >= ends_at_;
}

std::expected<void, std::string> CoordinatorSession::result() const {
  if (abort_reason_) return std::unexpected(*abort_reason_);
  return {};
}

}  // namespace actex
