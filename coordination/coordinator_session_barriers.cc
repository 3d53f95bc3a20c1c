// Barriers (PROTOCOL.md section 8, "Grammar"), and how the job ends once the final
// one is released.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "coordination/coordinator_session.h"
#include "storage/finished_job_record.h"

namespace actex {
namespace {

// Barrier names waiting for hosts at once; a healthy job has one or two.
constexpr size_t kMaxOpenBarriers = 256;

}  // namespace

void CoordinatorSession::OnBarrier(int host_id, const ReceivedMessage& message,
                                   Clock::time_point now) {
  auto barrier = message.As<BarrierMessage>();
  if (!barrier) return DropMalformed(fmt::format("host {}", host_id), barrier.error());
  if (hosts_[host_id]->passed_barriers.erase(barrier->name) > 0) {
    return Queue(hosts_[host_id]->identity, BarrierReleaseMessage{barrier->name});
  }
  auto found = barriers_.find(barrier->name);
  if (found == barriers_.end()) {
    if (barriers_.size() >= kMaxOpenBarriers) {
      return DropUnexpected(fmt::format("barrier '{}' from host {}: {} barriers are open already",
                                        barrier->name, host_id, barriers_.size()));
    }
    found = barriers_.emplace(barrier->name, std::set<int>{}).first;
  }
  if (!found->second.insert(host_id).second) {
    return DropUnexpected(
        fmt::format("host {} arriving at barrier '{}' a second time", host_id, barrier->name));
  }
  ReleaseIfAllArrived(barrier->name, now);
}

void CoordinatorSession::ReleaseIfAllArrived(const std::string& name, Clock::time_point now) {
  auto found = barriers_.find(name);
  if (found == barriers_.end()) return;
  for (size_t id = 0; id < hosts_.size(); ++id) {
    if (hosts_[id] && !found->second.contains(static_cast<int>(id))) return;
  }
  barriers_.erase(found);
  released_barriers_.insert(name);
  // The standby hears of it before any host does: a host that misses the release (host
  // 0 lost meanwhile) and enters the barrier again at the standby passes it there, not
  // waiting for the hosts that heard it and go on.
  next_standby_update_ = now;
  ShipToStandby(now);
  for (const auto& host : hosts_) {
    if (host) Queue(host->identity, BarrierReleaseMessage{name});
  }
  spdlog::info("coordinator: released barrier '{}'", name);
  if (name != kFinalBarrierName) return;
  phase_ = Phase::kEnding;
  ends_at_ = now + options_.final_drain;
  // With leases, chunks may still wait for the folder of a host of an earlier run.
  const bool unfinished = options_.leases && !options_.leases->finished();
  if (!unfinished) RecordFinished();
  if (lost_.empty() && !unfinished) return;
  std::string lost;
  for (const auto& [id, reason] : lost_) lost += (lost.empty() ? "" : "; ") + reason;
  if (lost_.empty()) {
    abort_reason_ = fmt::format(
        "the job finished with {}; run the command of the hosts named again to finish it",
        options_.leases->Progress());
    spdlog::error("coordinator: {}", *abort_reason_);
    return;
  }
  if (options_.leases && !unfinished) {
    spdlog::info("coordinator: the job finished without {} host(s) ({}); {}", lost_.size(), lost,
                 options_.leases->Progress());
    return;
  }
  abort_reason_ =
      unfinished
          ? fmt::format(
                "the job finished without {} host(s) ({}), and {}; run every host's command "
                "again to finish the rest",
                lost_.size(), lost, options_.leases->Progress())
          : fmt::format(
                "the job finished without {} host(s), whose shares are not all written ({}); "
                "run every host's command again to finish them",
                lost_.size(), lost);
  spdlog::error("coordinator: {}", *abort_reason_);
}

void CoordinatorSession::ReleaseOpenBarriers(Clock::time_point now) {
  std::vector<std::string> open;
  for (const auto& [name, arrived] : barriers_) open.push_back(name);
  for (const std::string& name : open) ReleaseIfAllArrived(name, now);
}

void CoordinatorSession::RecordFinished() {
  // A standby that took over without host 0's rendezvous knows no fingerprint.
  if (!options_.leases || options_.finished_record_folder.empty() ||
      rendezvous_.fingerprint().empty()) {
    return;
  }
  const FinishedJobRecord record{.fingerprint = rendezvous_.fingerprint(),
                                 .hosts = rendezvous_.num_hosts(),
                                 .progress = options_.leases->Progress()};
  // The job finished whatever becomes of the record: without it a node started later
  // joins as before and learns the end from host 0 while it lingers.
  if (auto written = WriteFinishedJobRecord(options_.finished_record_folder, record); !written) {
    spdlog::warn("coordinator: cannot record that the job finished: {}", written.error());
  }
}

}  // namespace actex
