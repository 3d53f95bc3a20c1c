// Who is in a job: the rendezvous, nodes joining the running job (in a lost host's
// place, the hosts of a lost replica together, or added), and hosts that leave it.
#include <spdlog/spdlog.h>

#include <utility>

#include "coordination/coordinator_session.h"

namespace actex {

void CoordinatorSession::OnHello(const std::string& identity, int fd, const std::string& address,
                                 const HelloMessage& hello, Clock::time_point now) {
  if (auto admitted = rendezvous_.Admit(hello, address); !admitted) {
    refused_.insert(identity);
    return Abort(admitted.error(), now);
  }
  const int host_id = hello.host_id;
  hosts_[host_id] = Host{identity, fd, now, std::nullopt, {}};
  host_by_identity_[identity] = host_id;
  counters_.joined_hosts = rendezvous_.joined();
  spdlog::info("coordinator: host {} joined from {} ({} of {})", host_id, address,
               rendezvous_.joined(), options_.num_hosts);
  if (!rendezvous_.complete()) return;
  if (options_.leases) {
    if (auto begun = options_.leases->Begin(rendezvous_.endpoints()); !begun) {
      return Abort(begun.error(), now);
    }
  }
  for (const auto& host : hosts_) {
    if (host) Queue(host->identity, WelcomeMessage{rendezvous_.endpoints()});
  }
  phase_ = Phase::kRunning;
  counters_.welcomed = true;
  StartStandbyLink(now);
  spdlog::info("coordinator: all {} host(s) joined; {} endpoint(s) shared", options_.num_hosts,
               rendezvous_.endpoints().size());
  // Added hosts that came early join now, as if they came this moment.
  for (auto& [id, node] : std::exchange(returning_, {})) OnJoiningHello(std::move(node), now);
}

void CoordinatorSession::OnJoiningHello(Joining node, Clock::time_point now) {
  const int host_id = node.hello.host_id;
  // The replica the coordinator's node holds a part of never comes back: losing it
  // ended the job.
  if (!Alone(host_id) && GroupOf(host_id) == GroupOf(coordinator_host_)) {
    return DropUnexpected(
        fmt::format("a Hello from a stranger at {} after the rendezvous", node.address));
  }
  const auto waiting = returning_.find(host_id);
  // A node asking again (as it does a standby until it took over) waits as it was.
  if (waiting != returning_.end() && waiting->second.identity == node.identity) return;
  if (waiting != returning_.end() && waiting->second.gone) {
    spdlog::info(
        "coordinator: the node at {} comes for host {} in place of the one at {}, "
        "whose connection closed while it waited",
        node.address, host_id, waiting->second.address);
  } else if (waiting != returning_.end()) {
    const std::string reason = fmt::format(
        "host {}: two nodes claim --host-id {}: the node at {} came first, then the "
        "node at {}",
        host_id, host_id, waiting->second.address, node.address);
    spdlog::warn("coordinator: refused the node at {}: {}", node.address, reason);
    return Queue(node.identity, AbortMessage{reason});
  }
  if (phase_ == Phase::kRendezvous) {
    spdlog::info("coordinator: host {} (an added host) at {} joins once the first {} host(s) did",
                 host_id, node.address, options_.num_hosts);
    returning_[host_id] = std::move(node);
    return;
  }
  if (auto fits = rendezvous_.CheckReturning(node.hello, node.address); !fits) {
    spdlog::warn("coordinator: refused the node at {}: {}", node.address, fits.error());
    return Queue(node.identity, AbortMessage{fits.error()});
  }
  if (!Alone(host_id)) {
    spdlog::info(
        "coordinator: a node at {} comes for host {}, whose replica spans hosts {}: it joins "
        "with them once each is lost and a node came for it",
        node.address, host_id, GroupText(host_id));
  } else if (hosts_[host_id]) {
    spdlog::warn(
        "coordinator: a node at {} comes for host {}, which is still in the job; it takes "
        "its place once host {} is found lost",
        node.address, host_id, host_id);
  }
  returning_[host_id] = std::move(node);
  ReadmitWhenFree(host_id, now);
}

void CoordinatorSession::ReadmitWhenFree(int host_id, Clock::time_point now) {
  std::vector<int> members;
  for (int other = 0; other < static_cast<int>(hosts_.size()); ++other) {
    if (GroupOf(other) != GroupOf(host_id)) continue;
    if (hosts_[other] || !returning_.contains(other)) return;
    members.push_back(other);
  }
  // The nodes bound new ports (rings, a standby coordinator): what they publish
  // replaces what those hosts published, so each learns the others' before it connects.
  for (int member : members) {
    const Joining& node = returning_[member];
    if (auto rebound = rendezvous_.Rebind(node.hello, node.address); !rebound) {
      spdlog::warn("coordinator: refused the node at {}: {}", node.address, rebound.error());
      Queue(node.identity, AbortMessage{rebound.error()});
      returning_.erase(member);
      return;
    }
  }
  if (members.size() > 1) {
    spdlog::info("coordinator: hosts {} come back together, as the replica they share",
                 GroupText(host_id));
  }
  for (int member : members) Readmit(member, returning_[member], now);
}

std::string CoordinatorSession::GroupText(int host_id) const {
  std::string text;
  for (int other = 0; other < options_.num_hosts; ++other) {
    if (GroupOf(other) != GroupOf(host_id)) continue;
    text += (text.empty() ? "" : ", ") + std::to_string(other);
  }
  return text;
}

void CoordinatorSession::Readmit(int host_id, Joining node, Clock::time_point now) {
  returning_.erase(host_id);  // `node` is a copy: it may have come from there
  if (options_.leases) {
    if (auto rejoined = options_.leases->Rejoin(host_id, node.hello.endpoints); !rejoined) {
      return Abort(rejoined.error(), now);
    }
    AnswerWaitingLeases(now);  // what it was listing when lost may be free now
  }
  // The standby's host back with a coordinator of its own: the standby again.
  if (host_id == options_.standby_host && !options_.standby) StartStandbyLink(now);
  hosts_[host_id] = Host{node.identity, node.fd, now, std::nullopt, released_barriers_, 0, now};
  host_by_identity_[node.identity] = host_id;
  silenced_.erase(node.identity);  // its link again, should it ever be the same
  Queue(node.identity, WelcomeMessage{rendezvous_.endpoints()});
  silent_since_.erase(host_id);
  stopped_with_replica_.erase(host_id);
  if (lost_.erase(host_id) > 0 || !rendezvous_.is_added(host_id)) {
    spdlog::info("coordinator: host {} is back, from {}; {}", host_id, node.address,
                 options_.leases ? "it takes leases again" : "it finishes its own share");
  } else {
    spdlog::info(
        "coordinator: host {} joined the running job from {} (an added host); it takes "
        "leases",
        host_id, node.address);
  }
}

void CoordinatorSession::LoseHost(int host_id, Departure departure, std::string reason,
                                  Clock::time_point now) {
  // A host at the final barrier finished its part: nothing of the job waits for it
  // any more, whatever the mesh.
  const auto final_barrier = barriers_.find(kFinalBarrierName);
  if (host_id != coordinator_host_ && phase_ == Phase::kRunning &&
      final_barrier != barriers_.end() && final_barrier->second.contains(host_id)) {
    spdlog::warn("coordinator: {}; it had finished its part, so the job goes on without it",
                 reason);
    if (departure == Departure::kSilent && hosts_[host_id]) {
      silenced_[hosts_[host_id]->identity] = {.host_id = host_id, .at_final_barrier = true};
    }
    RemoveHost(host_id);
    return ReleaseOpenBarriers(now);
  }
  if (phase_ != Phase::kEnding) AnnounceLost(host_id, reason);
  if (phase_ != Phase::kRunning || GroupOf(host_id) == GroupOf(coordinator_host_)) {
    return Abort(std::move(reason), now);
  }
  if (options_.leases) {
    if (auto lost = options_.leases->Lose(host_id); !lost) return Abort(lost.error(), now);
  }
  spdlog::error("coordinator: {}; the other hosts go on {}", reason,
                options_.leases ? "and take its unlisted chunks" : "with their own shares");
  // (A host that did not reattach to a standby taking over has no link here.)
  if (departure == Departure::kSilent && hosts_[host_id]) {
    silenced_[hosts_[host_id]->identity] = {host_id};
  }
  RemoveHost(host_id);
  // The hosts sharing its replica wait for collectives that will never come.
  for (int other = 0; other < static_cast<int>(hosts_.size()); ++other) {
    if (!hosts_[other] || GroupOf(other) != GroupOf(host_id)) continue;
    const std::string stopped = fmt::format(
        "host {} stopped with its replica, which lost host {} ({})", other, host_id, reason);
    spdlog::error("coordinator: {}", stopped);
    Queue(hosts_[other]->identity, AbortMessage{stopped});
    AnnounceLost(other, stopped);
    if (options_.leases) {
      if (auto lost = options_.leases->Lose(other); !lost) return Abort(lost.error(), now);
    }
    RemoveHost(other);
    lost_[other] = stopped;
    stopped_with_replica_.insert(other);
  }
  lost_[host_id] = std::move(reason);
  if (departure == Departure::kSilent) silent_since_[host_id] = now;
  if (options_.leases) AnswerWaitingLeases(now);
  if (returning_.contains(host_id)) ReadmitWhenFree(host_id, now);
  ReleaseOpenBarriers(now);
}

void CoordinatorSession::AnnounceLost(int host_id, const std::string& reason) {
  MonitorEventMessage lost;
  lost.kind = kLostEventKind;
  lost.host_id = host_id;
  lost.message = reason;
  lost.num_hosts = options_.num_hosts;
  monitor_events_.push_back(std::move(lost));
}

int CoordinatorSession::GroupOf(int host_id) const {
  if (host_id >= options_.num_hosts) return -1 - host_id;  // an added host
  return options_.stop_groups.empty() ? 0 : options_.stop_groups[host_id];
}

bool CoordinatorSession::Alone(int host_id) const {
  if (host_id < 0 || host_id >= options_.num_hosts) return true;  // added, or refused later
  for (int other = 0; other < options_.num_hosts; ++other) {
    if (other != host_id && GroupOf(other) == GroupOf(host_id)) return false;
  }
  return true;
}

bool CoordinatorSession::ReturnToFinalBarrier(const std::string& identity, int fd,
                                              const std::string& address, Clock::time_point now) {
  const auto found = silenced_.find(identity);
  if (found == silenced_.end() || !found->second.at_final_barrier) return false;
  const int host_id = found->second.host_id;
  if (hosts_[host_id]) return false;  // another node took its place: StopSilencedHost
  silenced_.erase(found);
  if (phase_ == Phase::kEnding) {
    spdlog::info(
        "coordinator: host {} at {}, lost at the final barrier, still runs; told how "
        "the job ended",
        host_id, address);
    if (abort_reason_) {
      Queue(identity, AbortMessage{*abort_reason_});
    } else {
      Queue(identity, BarrierReleaseMessage{kFinalBarrierName});
    }
    return true;
  }
  spdlog::info(
      "coordinator: host {} at {}, lost at the final barrier, is back; it waits there "
      "again",
      host_id, address);
  hosts_[host_id] = Host{identity, fd, now, std::nullopt, released_barriers_, 0, now};
  host_by_identity_[identity] = host_id;
  barriers_[kFinalBarrierName].insert(host_id);
  return true;
}

void CoordinatorSession::RemoveHost(int host_id) {
  if (hosts_[host_id]) host_by_identity_.erase(hosts_[host_id]->identity);
  hosts_[host_id].reset();
  waiting_leases_.erase(host_id);
  // A node that takes its place later has arrived nowhere yet.
  for (auto& [name, arrived] : barriers_) arrived.erase(host_id);
}

}  // namespace actex
