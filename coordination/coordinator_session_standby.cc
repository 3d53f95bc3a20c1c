// The standby coordinator (PROTOCOL.md section 8, "Standby"), host 0's side: its
// session replicating the lease log and the rendezvous to the standby, handing the job
// over, and going on without a lost standby. The standby's side is in
// coordinator_session_takeover.cc.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "coordination/coordinator_session.h"

namespace actex {
namespace {

// Records per StandbyUpdate: a resumed job's whole log goes in several, each far
// below the control socket's frame limit.
constexpr size_t kMaxRecordsPerUpdate = 50000;

}  // namespace

void CoordinatorSession::StartStandbyLink(Clock::time_point now) {
  if (options_.standby_host < 0 || !options_.leases) return;
  const auto& table = rendezvous_.endpoints();
  const auto found = table.find(kStandbyEndpointKey);
  if (found == table.end()) {
    spdlog::warn(
        "coordinator: host {} published no standby coordinator; host 0's loss ends the job",
        options_.standby_host);
    return;
  }
  const bool again = standby_endpoint_.has_value();
  standby_endpoint_ = found->second;
  standby_active_ = true;
  shipped_ = 0;
  confirmed_ = 0;
  standby_holds_joined_ = false;
  standby_heard_ = now;
  standby_disconnected_at_.reset();
  next_standby_update_ = now;
  if (again) {
    spdlog::info(
        "coordinator: host {} came back with a standby coordinator at {}; it gets a copy of the "
        "lease log afresh, and host 0's loss is survivable again",
        options_.standby_host, found->second);
  } else {
    spdlog::info(
        "coordinator: the standby coordinator of host {} at {} keeps a copy of the lease log",
        options_.standby_host, found->second);
  }
}

void CoordinatorSession::QueueAnswer(OutgoingMessage answer) {
  if (standby_active_ && (!held_answers_.empty() || confirmed_ < options_.leases->records())) {
    held_answers_.push_back({options_.leases->records(), std::move(answer)});
    return;
  }
  outgoing_.push_back(std::move(answer));
}

void CoordinatorSession::ReleaseAnswers() {
  while (!held_answers_.empty() &&
         (!standby_active_ || held_answers_.front().records <= confirmed_)) {
    outgoing_.push_back(std::move(held_answers_.front().message));
    held_answers_.pop_front();
  }
}

void CoordinatorSession::ShipToStandby(Clock::time_point now) {
  if (!standby_active_) return;
  const uint64_t records = options_.leases->records();
  const bool periodic = now >= next_standby_update_;
  if (records == shipped_ && !periodic) return;
  // Once an interval, what is not confirmed yet goes again: an update may have been
  // dropped (a full queue, a reconnect), and the standby skips what it holds.
  if (periodic) shipped_ = confirmed_;
  StandbyUpdateMessage update;
  update.first = shipped_;
  update.records = options_.leases->RecordsSince(shipped_);
  if (update.records.size() > kMaxRecordsPerUpdate) update.records.resize(kMaxRecordsPerUpdate);
  for (size_t id = 0; id < hosts_.size(); ++id) {
    if (hosts_[id]) update.hosts.push_back(static_cast<int32_t>(id));
  }
  update.released_barriers.assign(released_barriers_.begin(), released_barriers_.end());
  update.hand_over = handing_over_;
  if (!standby_holds_joined_) {
    update.joined = rendezvous_.Admitted();
    update.max_hosts = rendezvous_.max_hosts();
  }
  shipped_ = update.first + update.records.size();
  Queue(kStandbyLink, update);
  next_standby_update_ = now + options_.liveness.heartbeat_interval;
}

void CoordinatorSession::HandleStandbyLink(const std::expected<ReceivedMessage, WireError>& message,
                                           Clock::time_point now) {
  if (!standby_active_) return;
  if (!message) return DropMalformed("the standby", message.error().message);
  auto confirm = message->As<StandbyConfirmMessage>();
  if (!confirm) return DropMalformed("the standby", confirm.error());
  standby_heard_ = now;
  standby_disconnected_at_.reset();
  if (confirm->records < confirmed_) {
    // Fewer records than the standby confirmed before: another process answers at its
    // address (its host restarted, binding the same --standby-coordinator port), with
    // a copy started afresh that no update from where the old one stopped can extend.
    // It gets the whole log now: the answers held for it (a draining host's listing)
    // go out once it holds them, not when its host's node is found lost and rejoins.
    spdlog::warn(
        "coordinator: the standby coordinator of host {} holds {} of the {} records it "
        "confirmed: it restarted; it gets a copy of the lease log afresh",
        options_.standby_host, confirm->records, confirmed_);
    shipped_ = 0;
    confirmed_ = confirm->records;
    standby_holds_joined_ = false;
    next_standby_update_ = now;
    return ShipToStandby(now);
  }
  confirmed_ = std::max(confirmed_, confirm->records);
  standby_holds_joined_ = standby_holds_joined_ || confirm->joined;
  ReleaseAnswers();
}

void CoordinatorSession::HandOver(std::string reason, Clock::time_point now) {
  // Its drained writer listed what was whole: the rest of its chunks are free.
  if (auto lost = options_.leases->Lose(0); !lost) return Abort(lost.error(), now);
  spdlog::warn("coordinator: {}; it hands the job over to the standby on host {}", reason,
               options_.standby_host);
  handing_over_ = true;
  next_standby_update_ = now;
  ShipToStandby(now);
  for (size_t id = 1; id < hosts_.size(); ++id) {
    if (hosts_[id]) Queue(hosts_[id]->identity, HandOverMessage{reason});
  }
  phase_ = Phase::kEnding;
  ends_at_ = now + options_.final_drain;
}

void CoordinatorSession::OnStandbyLinkEvent(const ConnectionEvent& event, Clock::time_point now) {
  if (!standby_active_) return;
  // A crashed standby's connection closes at once: no need to wait for its silence.
  if (event.kind == ConnectionEvent::Kind::kDisconnected && !standby_disconnected_at_) {
    standby_disconnected_at_ = now;
  } else if (event.kind == ConnectionEvent::Kind::kConnected) {
    standby_disconnected_at_.reset();
  }
}

bool CoordinatorSession::HeardSince(int host_id, Clock::time_point since) const {
  if (!hosts_[host_id]) return false;
  if (hosts_[host_id]->welcomed >= since) return true;
  const auto sent = heartbeats_sent_.find(hosts_[host_id]->echoed);
  return sent != heartbeats_sent_.end() && sent->second >= since;
}

void CoordinatorSession::LoseStandby(const std::string& why, Clock::time_point now) {
  const int standby = options_.standby_host;
  // A host that echoed a heartbeat sent within `window` cannot have found host 0 lost
  // yet (by silence or by a closed connection), so it is not among the hosts that
  // let the standby take over; `window` is below both of those delays.
  const auto window =
      std::min(options_.liveness.heartbeat_timeout, options_.liveness.disconnect_grace) -
      options_.liveness.heartbeat_interval / 2;
  int in_job = 0;
  int with_us = 0;
  for (size_t id = 0; id < hosts_.size(); ++id) {
    const int host_id = static_cast<int>(id);
    // A host found silent within the timeout was in the job when this silence began:
    // host 0 may be the one cut off from both. One whose process ended (its connection
    // closed, or it failed) or that this coordinator stopped is in no other side.
    const auto silent = silent_since_.find(host_id);
    const bool just_silent =
        silent != silent_since_.end() && now - silent->second < options_.liveness.heartbeat_timeout;
    if (!hosts_[id] && host_id != standby && !just_silent) continue;
    ++in_job;
    if (host_id != standby && (host_id == coordinator_host_ || HeardSince(host_id, now - window))) {
      ++with_us;
    }
  }
  const std::string silent = fmt::format("the standby coordinator of host {} {}", standby, why);
  // Without most hosts, this may be the lesser side of a split network (or host 0
  // was frozen), and the standby may have taken over the job with the rest; unless this
  // coordinator stopped the standby's host itself, with its replica: then its silence
  // is no sign of a split.
  if (!stopped_with_replica_.contains(standby) && 2 * with_us <= in_job) {
    return Abort(fmt::format("host 0 lost touch with most of the job: {}, and only {} of the "
                             "job's {} hosts heard host 0 within {} (host 0 is cut off from "
                             "them, or they stopped): the standby may have taken over the job "
                             "with them, so host 0 hands out no more chunks and ends here; run "
                             "every host's command again to finish the job if it did not",
                             silent, with_us, in_job, SecondsText(window)),
                 now);
  }
  spdlog::warn("coordinator: {}; the job goes on without a standby, so host 0's loss now ends it",
               silent);
  standby_active_ = false;
  ReleaseAnswers();
}

}  // namespace actex
