// The coordinator's side of work leases (PROTOCOL.md section 8, "Leases"): the part
// of CoordinatorSession that talks to its LeaseDesk.
#include <spdlog/fmt/fmt.h>

#include "coordination/coordinator_session.h"

namespace actex {

void CoordinatorSession::OnLeaseMessage(int host_id, const ReceivedMessage& message,
                                        Clock::time_point now) {
  const std::string sender = fmt::format("host {}", host_id);
  LeaseDesk& leases = *options_.leases;
  if (message.type == MessageType::kChunksListed) {
    auto listed = message.As<ChunksListedMessage>();
    if (!listed) return DropMalformed(sender, listed.error());
    if (auto applied = leases.List(host_id, listed->chunks); !applied) {
      return Abort(applied.error(), now);
    }
    return AnswerWaitingLeases(now);
  }
  if (message.type == MessageType::kListingIntent) {
    auto intent = message.As<ListingIntentMessage>();
    if (!intent) return DropMalformed(sender, intent.error());
    auto allowed = leases.BeginListing(host_id, intent->chunks);
    if (!allowed) return Abort(allowed.error(), now);
    return QueueAnswer(
        Encode(hosts_[host_id]->identity,
               ListingAckMessage{intent->request, *allowed,
                                 *allowed ? "" : "the host does not hold every chunk it lists"}));
  }
  auto request = message.As<LeaseRequestMessage>();
  if (!request) return DropMalformed(sender, request.error());
  if (auto owed = owed_grants_.find(host_id); owed != owed_grants_.end() && !owed->second.empty()) {
    const int64_t chunk = owed->second.front();
    owed->second.pop_front();
    return SendGrant(host_id, LeaseGrantMessage{request->request, chunk});
  }
  auto granted = leases.Grant(host_id, request->corpus_chunks);
  if (!granted) return Abort(granted.error(), now);
  if (*granted) return SendGrant(host_id, LeaseGrantMessage{request->request, **granted});
  // None is free: the request waits for a lost host's chunks, or the job's end.
  const bool nothing_left = leases.finished() || leases.stalled();
  SendGrant(host_id, LeaseGrantMessage{request->request, -1, nothing_left});
  if (!nothing_left) waiting_leases_[host_id] = request->request;
}

void CoordinatorSession::SendGrant(int host_id, LeaseGrantMessage grant) {
  grant.holder = host_id;
  QueueAnswer(Encode(hosts_[host_id]->identity, grant));
  if (grant.chunk < 0 && !grant.finished) return;  // a wait concerns the asking host only
  const auto followers = options_.lease_followers.find(host_id);
  if (followers == options_.lease_followers.end()) return;
  for (int follower : followers->second) {
    if (hosts_[follower]) QueueAnswer(Encode(hosts_[follower]->identity, grant));
  }
}

void CoordinatorSession::AnswerWaitingLeases(Clock::time_point now) {
  LeaseDesk& leases = *options_.leases;
  for (auto waiting = waiting_leases_.begin(); waiting != waiting_leases_.end();) {
    const auto [host_id, request] = *waiting;
    auto granted = leases.Grant(host_id, -1);
    if (!granted) return Abort(granted.error(), now);
    const bool nothing_left = leases.finished() || leases.stalled();
    if (!*granted && !nothing_left) {
      ++waiting;
      continue;
    }
    SendGrant(host_id,
              LeaseGrantMessage{request, granted->value_or(-1), nothing_left && !*granted});
    waiting = waiting_leases_.erase(waiting);
  }
}

}  // namespace actex
