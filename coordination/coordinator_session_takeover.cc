// The standby coordinator (PROTOCOL.md section 8, "Standby"), the standby's side:
// its session keeping the copy of host 0's lease log and rendezvous, and taking the
// job over once host 0 is lost.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "coordination/coordinator_session.h"

namespace actex {

void CoordinatorSession::HandleAsStandby(const std::string& identity, int fd,
                                         const std::string& address, const ReceivedMessage& message,
                                         Clock::time_point now) {
  if (message.type == MessageType::kReattach) {
    auto reattach = message.As<ReattachMessage>();
    if (!reattach) return DropMalformed(fmt::format("a node at {}", address), reattach.error());
    const int host_id = reattach->host_id;
    if (std::find(members_.begin(), members_.end(), host_id) == members_.end()) {
      const bool of_the_job = host_id >= 0 && static_cast<size_t>(host_id) < hosts_.size();
      // A host cut off (or silent) past the timeout while host 0 kept running: host 0
      // found it lost and runs the job on without it.
      Queue(identity,
            AbortMessage{
                of_the_job
                    ? fmt::format("host {} came to the standby coordinator, but host 0's "
                                  "coordinator still runs the job and no longer counts host {} "
                                  "in it: it found host {} lost (cut off or silent past the "
                                  "heartbeat timeout) and gave its unlisted chunks to the other "
                                  "hosts; run host {}'s command again to rejoin the job",
                                  host_id, host_id, host_id, host_id)
                    : fmt::format("host {}: the standby coordinator does not know it as a host "
                                  "of the job",
                                  host_id)});
      return;
    }
    spdlog::info("coordinator (standby): host {} reattached from {}", host_id, address);
    reattached_[host_id] = {Joining{identity, fd, address, {}}, std::move(*reattach)};
    return;
  }
  // A node that comes while host 0 runs the job is host 0's; after a takeover the
  // node asks again.
  if (message.type == MessageType::kHeartbeat || message.type == MessageType::kHello) return;
  if (message.type != MessageType::kStandbyUpdate || phase_ != Phase::kStandby) {
    return DropUnexpected(fmt::format("a {} message from {} at the standby coordinator",
                                      MessageTypeName(message.type), address));
  }
  if (primary_identity_.empty()) primary_identity_ = identity;
  if (identity != primary_identity_) {
    return DropUnexpected(fmt::format("a StandbyUpdate from a second sender at {}", address));
  }
  auto update = message.As<StandbyUpdateMessage>();
  if (!update) return DropMalformed("host 0's coordinator", update.error());
  primary_heard_ = now;
  primary_fd_ = fd;
  primary_disconnected_at_.reset();
  LeaseDesk& leases = *options_.leases;
  const uint64_t held = leases.records();
  if (update->first <= held && update->first + update->records.size() > held) {
    std::vector<std::string> fresh(
        update->records.begin() + static_cast<std::ptrdiff_t>(held - update->first),
        update->records.end());
    if (auto replicated = leases.Replicate(fresh); !replicated) {
      // Confirming no more makes host 0 go on without this standby.
      spdlog::error("coordinator (standby): {}; it stops being the standby", replicated.error());
      abort_reason_ = replicated.error();
      phase_ = Phase::kEnding;
      ends_at_ = now;
      return;
    }
  }
  members_ = update->hosts;
  replicated_barriers_ = {update->released_barriers.begin(), update->released_barriers.end()};
  if (joined_.empty() && !update->joined.empty()) {
    joined_ = std::move(update->joined);
    joined_max_hosts_ = update->max_hosts;
    // Host 0's --max-hosts counts: hosts it added may reattach here.
    if (hosts_.size() < static_cast<size_t>(joined_max_hosts_)) hosts_.resize(joined_max_hosts_);
  }
  Queue(identity, StandbyConfirmMessage{leases.records(), !joined_.empty()});
  if (update->hand_over) {
    // Host 0 said it stops coordinating: no split to fear, it counts no more.
    std::erase(members_, 0);
    BeginTakeover("host 0 handed the job over", now);
  }
}

void CoordinatorSession::TickStandby(Clock::time_point now) {
  if (phase_ == Phase::kTakeover) {
    size_t expected = 0;
    for (int32_t host : members_) {
      if (host != 0 && !reattached_.contains(host)) ++expected;
    }
    if (expected == 0 || now >= takeover_deadline_) FinishTakeover(now);
    return;
  }
  if (!primary_heard_) return;  // host 0 never linked: nothing to take over
  if (now - *primary_heard_ >= options_.liveness.heartbeat_timeout) {
    return BeginTakeover(fmt::format("host 0's coordinator sent nothing for {}",
                                     SecondsText(options_.liveness.heartbeat_timeout)),
                         now);
  }
  if (primary_disconnected_at_ &&
      now - *primary_disconnected_at_ >= options_.liveness.disconnect_grace) {
    BeginTakeover(fmt::format("host 0's coordinator's connection closed and it did not come "
                              "back within {}",
                              SecondsText(options_.liveness.disconnect_grace)),
                  now);
  }
}

void CoordinatorSession::BeginTakeover(std::string reason, Clock::time_point now) {
  spdlog::warn(
      "coordinator (standby on host {}): {}; it takes over the job once the other hosts "
      "reattach (up to {})",
      options_.standby_host, reason, SecondsText(options_.liveness.heartbeat_timeout));
  takeover_reason_ = std::move(reason);
  phase_ = Phase::kTakeover;
  takeover_deadline_ = now + options_.liveness.heartbeat_timeout;
}

void CoordinatorSession::FinishTakeover(Clock::time_point now) {
  coordinator_host_ = options_.standby_host;
  for (auto& [host_id, reattached] : reattached_) {
    Joining& node = reattached.first;
    // Host 0 released these: a host that enters one again here (it had not heard the
    // release, or joined after it and was not answered) passes it at once.
    hosts_[host_id] = Host{node.identity, node.fd, now, std::nullopt, replicated_barriers_, 0, now};
    host_by_identity_[node.identity] = host_id;
  }
  if (replicated_barriers_.contains(kFinalBarrierName)) {
    // Host 0 had released the final barrier: the job is done; the hosts that did not
    // hear so learn it here.
    spdlog::info("coordinator (standby on host {}): host 0 ended the job before it was lost",
                 options_.standby_host);
    for (auto& [host_id, reattached] : reattached_) {
      Queue(reattached.first.identity, WelcomeMessage{});
      Queue(reattached.first.identity, BarrierReleaseMessage{kFinalBarrierName});
    }
    phase_ = Phase::kEnding;
    ends_at_ = now + options_.final_drain;
    return;
  }
  const size_t present = reattached_.size();
  if (2 * present <= members_.size()) {
    return Abort(fmt::format("host 0 was lost ({}), and only {} of the job's {} hosts reattached "
                             "to the standby coordinator on host {}: too few to tell a lost "
                             "host 0 from a split network, so it does not take over. Where "
                             "host 0 still runs with the others (a split between host 0 and "
                             "host {}), they finish the job without host {}; else run every "
                             "host's command again to finish it",
                             takeover_reason_, present, members_.size(), options_.standby_host,
                             options_.standby_host, options_.standby_host),
                 now);
  }
  phase_ = Phase::kRunning;
  released_barriers_ = replicated_barriers_;
  // Nodes that come from now on (a lost host's command again, an added host) are
  // checked against host 0's rendezvous.
  if (auto book = Rendezvous::Replay(options_.num_hosts, joined_max_hosts_, joined_)) {
    rendezvous_ = std::move(*book);
  } else {
    spdlog::warn("coordinator (standby on host {}): {}; it admits no node that comes later",
                 options_.standby_host, book.error());
  }
  spdlog::warn("coordinator (standby on host {}): took over the job with {} of its {} hosts",
               options_.standby_host, present, members_.size());
  counters_.took_over = true;
  counters_.welcomed = true;
  for (auto& [host_id, reattached] : reattached_) {
    auto unknown =
        options_.leases->Reattach(host_id, reattached.second.held, reattached.second.listed);
    if (!unknown) return Abort(unknown.error(), now);
    owed_grants_[host_id] = {unknown->begin(), unknown->end()};
    Queue(reattached.first.identity, WelcomeMessage{});
  }
  for (int32_t host : members_) {
    if (hosts_[host]) continue;
    LoseHost(host, Departure::kSilent,
             host == 0
                 ? fmt::format("host 0 lost: {}", takeover_reason_)
                 : fmt::format("host {} lost: it did not reattach after host 0 was lost", host),
             now);
    if (phase_ != Phase::kRunning) return;
  }
  ReleaseOpenBarriers(now);
}

}  // namespace actex
