// A node's lease traffic (PROTOCOL.md section 8, "Leases"), and its reattaching to
// the standby coordinator ("Standby"), which resends what the lost host 0 never
// answered.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "transport/coordinator_client.h"
#include "transport/interrupted.h"

namespace actex {

// While reattaching, what the host asks waits for the standby's Welcome (ResendOpen):
// sent earlier, it could reach the standby twice.
void CoordinatorClient::RequestLease(const LeaseRequestMessage& request) {
  open_requests_[request.request] = request;
  if (!reattach_deadline_) SendNow(request);
}

void CoordinatorClient::ReportListing(const ListingIntentMessage& intent) {
  open_intents_[intent.request] = intent;
  if (!reattach_deadline_) SendNow(intent);
}

void CoordinatorClient::ReportListed(const ChunksListedMessage& listed) {
  for (int64_t chunk : listed.chunks) {
    held_.erase(chunk);
    listed_.insert(chunk);
  }
  if (!reattach_deadline_) {
    SendNow(listed);
  } else {
    unsent_listed_.push_back(listed);
  }
}

std::vector<LeaseGrantMessage> CoordinatorClient::TakeGrants() { return std::move(grants_); }

std::vector<ListingAckMessage> CoordinatorClient::TakeListingAcks() {
  return std::move(listing_acks_);
}

bool CoordinatorClient::Reattach(const std::string& reason, Clock::time_point now) {
  const auto standby = endpoints_.find(kStandbyEndpointKey);
  if (lost_primary_ || host_id_ == 0 || standby == endpoints_.end()) return false;
  try {
    RetryInterrupted([&] { socket_.disconnect(coordinator_endpoint_); });
    RetryInterrupted([&] { socket_.connect(standby->second); });
  } catch (const zmq::error_t& e) {
    spdlog::error("host {}: cannot reach the standby coordinator at {}: {}", host_id_,
                  standby->second, e.what());
    return false;
  }
  lost_primary_ = reason;
  coordinator_endpoint_ = standby->second;
  heard_sequence_ = 0;  // the standby counts its own
  last_message_.reset();
  disconnected_at_.reset();
  reattach_deadline_ = now + 2 * options_.liveness.heartbeat_timeout + options_.join_margin;
  ReattachMessage reattach{
      host_id_, {held_.begin(), held_.end()}, {listed_.begin(), listed_.end()}};
  spdlog::warn(
      "host {}: lost the coordinator (host 0): {}; reattaching to the standby coordinator at {} "
      "(it holds {} chunk(s))",
      host_id_, reason, coordinator_endpoint_, reattach.held.size());
  SendNow(reattach);
  return true;
}

void CoordinatorClient::ResendOpen() {
  for (const std::string& barrier : entered_barriers_) SendNow(BarrierMessage{barrier});
  for (const ChunksListedMessage& listed : std::exchange(unsent_listed_, {})) SendNow(listed);
  for (const auto& [request, message] : open_requests_) SendNow(message);
  for (const auto& [request, intent] : open_intents_) SendNow(intent);
}

}  // namespace actex
