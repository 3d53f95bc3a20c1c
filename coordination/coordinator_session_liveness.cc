// The coordinator's clock (coordinator_session.h): each turn's resumption, the
// heartbeats it sends, the silences and closed connections it judges (PROTOCOL.md
// "Liveness"), its own freeze, a lost host found still running, and when Tick is
// next due.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include "coordination/coordinator_session.h"

namespace actex {

void CoordinatorSession::Resume(Clock::time_point now) {
  EndIfFrozen(now);
  if (!turn_began_running_ && phase_ == Phase::kRunning) RestartClocks(now);
  last_turn_ = now;
  turn_began_running_ = phase_ == Phase::kRunning;
}

void CoordinatorSession::RestartClocks(Clock::time_point now) {
  // The turn that started the job may have been long (the lease desk reads every
  // folder), and its Welcomes went out only as it ended: every silence counts from
  // the turn after it, and every host heard this coordinator then.
  for (auto& host : hosts_) {
    if (!host) continue;
    host->last_message = std::max(host->last_message, now);
    host->welcomed = std::max(host->welcomed, now);
  }
  if (standby_active_) standby_heard_ = std::max(standby_heard_, now);
}

void CoordinatorSession::EndIfFrozen(Clock::time_point now) {
  const Clock::duration frozen = now - last_turn_;
  // The turn that starts the job (the rendezvous completed, the standby took over) may
  // be long, reading the folders: no host waited on this coordinator during it.
  if (!turn_began_running_ || phase_ != Phase::kRunning ||
      frozen < options_.liveness.heartbeat_timeout) {
    return;
  }
  const std::string after = standby_active_
                                ? fmt::format(
                                      "the standby coordinator on host {} took the job over "
                                      "with the other hosts if most of them reached it",
                                      options_.standby_host)
                                : std::string("the other hosts ended the job");
  Abort(fmt::format("host {} was frozen for {} (its process did not run: paused, or starved of "
                    "CPU), past the {} heartbeat timeout, so the other hosts took it for lost "
                    "and {}; host {} hands out no more chunks and ends here. Run every host's "
                    "command again if the job did not finish",
                    coordinator_host_,
                    SecondsText(std::chrono::duration_cast<std::chrono::milliseconds>(frozen)),
                    SecondsText(options_.liveness.heartbeat_timeout), after, coordinator_host_),
        now);
}

void CoordinatorSession::Tick(Clock::time_point now) {
  EndIfFrozen(now);  // frozen within this turn: every silence it sees now is its own
  if (phase_ == Phase::kEnding) return;
  if (phase_ == Phase::kStandby || phase_ == Phase::kTakeover) return TickStandby(now);
  // The turn that started the job judges no silence: Resume restarts the clocks first.
  if (phase_ == Phase::kRunning && !turn_began_running_) return;
  if (standby_active_ && now - standby_heard_ >= options_.liveness.heartbeat_timeout) {
    LoseStandby(
        fmt::format("sent nothing for {}", SecondsText(options_.liveness.heartbeat_timeout)), now);
  } else if (standby_active_ && standby_disconnected_at_ &&
             now - *standby_disconnected_at_ >= options_.liveness.disconnect_grace) {
    LoseStandby(fmt::format("closed its connection and did not come back within {}",
                            SecondsText(options_.liveness.disconnect_grace)),
                now);
  }
  if (phase_ == Phase::kEnding) return;
  if (phase_ == Phase::kRendezvous && now - started_ >= options_.join_timeout) {
    return Abort(rendezvous_.MissingHostsReason(options_.join_timeout), now);
  }
  for (size_t id = 0; id < hosts_.size(); ++id) {
    if (!hosts_[id]) continue;
    const Host& host = *hosts_[id];
    const int host_id = static_cast<int>(id);
    if (now - host.last_message >= options_.liveness.heartbeat_timeout) {
      LoseHost(host_id, Departure::kSilent,
               fmt::format("host {} lost: no message for {}", id,
                           SecondsText(options_.liveness.heartbeat_timeout)),
               now);
    } else if (host.disconnected_at &&
               now - *host.disconnected_at >= options_.liveness.disconnect_grace) {
      LoseHost(host_id, Departure::kEnded,
               fmt::format("host {} lost: its connection closed and it did not come back "
                           "within {}",
                           id, SecondsText(options_.liveness.disconnect_grace)),
               now);
    }
    if (phase_ == Phase::kEnding) return;
  }
  if (now >= next_heartbeat_) {
    ++heartbeat_sequence_;
    heartbeats_sent_[heartbeat_sequence_] = now;
    // Only the newest are ever asked about (HeardWithin).
    if (heartbeats_sent_.size() > 64) heartbeats_sent_.erase(heartbeats_sent_.begin());
    const std::string standby = standby_active_ ? *standby_endpoint_ : "";
    for (const auto& host : hosts_) {
      if (host) {
        Queue(host->identity,
              HeartbeatMessage{kCoordinatorHostId, heartbeat_sequence_, 0, standby});
      }
    }
    next_heartbeat_ = std::max(next_heartbeat_ + options_.liveness.heartbeat_interval, now);
  }
  ShipToStandby(now);
}

bool CoordinatorSession::StopSilencedHost(const std::string& identity, const std::string& address,
                                          MessageType type) {
  const auto found = silenced_.find(identity);
  if (found == silenced_.end()) return false;
  SilencedHost& silenced = found->second;
  const int host_id = silenced.host_id;
  if (silenced.told) {
    DropUnexpected(fmt::format("a {} message from host {} at {}, told it was found lost",
                               MessageTypeName(type), host_id, address));
    return true;
  }
  silenced.told = true;
  const auto lost = lost_.find(host_id);
  std::string reason =
      lost == lost_.end()
          ? fmt::format(
                "host {} was found lost and another node took its place in the job; "
                "this process stops here",
                host_id)
          : fmt::format(
                "{}, and the job went on without it: this process stops here (what it "
                "listed stays in the job{}). Run host {}'s command again to rejoin",
                lost->second,
                options_.leases ? "; the other hosts take the chunks it had not listed" : "",
                host_id);
  spdlog::warn("coordinator: host {} at {}, found lost earlier, still runs; told it to stop",
               host_id, address);
  Queue(identity, AbortMessage{std::move(reason)});
  return true;
}

CoordinatorSession::Clock::time_point CoordinatorSession::NextDeadline() const {
  if (phase_ == Phase::kEnding) return ends_at_;
  if (phase_ == Phase::kTakeover) return takeover_deadline_;
  if (phase_ == Phase::kStandby) {
    Clock::time_point next = Clock::now() + options_.liveness.heartbeat_interval;
    if (primary_heard_)
      next = std::min(next, *primary_heard_ + options_.liveness.heartbeat_timeout);
    if (primary_disconnected_at_) {
      next = std::min(next, *primary_disconnected_at_ + options_.liveness.disconnect_grace);
    }
    return next;
  }
  Clock::time_point next = next_heartbeat_;
  if (standby_active_) {
    next = std::min(
        {next, next_standby_update_, standby_heard_ + options_.liveness.heartbeat_timeout});
    if (standby_disconnected_at_) {
      next = std::min(next, *standby_disconnected_at_ + options_.liveness.disconnect_grace);
    }
  }
  if (phase_ == Phase::kRendezvous) next = std::min(next, started_ + options_.join_timeout);
  for (const auto& host : hosts_) {
    if (!host) continue;
    next = std::min(next, host->last_message + options_.liveness.heartbeat_timeout);
    if (host->disconnected_at) {
      next = std::min(next, *host->disconnected_at + options_.liveness.disconnect_grace);
    }
  }
  return next;
}

}  // namespace actex
