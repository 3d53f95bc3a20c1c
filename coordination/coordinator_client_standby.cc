// A node's side of the standby coordinator (PROTOCOL.md section 8, "Standby"):
// reattaching to it once host 0's coordinator is lost, resending what host 0 never
// answered, and joining a job through it after it took over.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "coordination/coordinator_client.h"

namespace actex {

void CoordinatorClient::LearnStandby(const std::string& endpoint) {
  if (endpoint.empty() || lost_primary_ || host_id_ == 0) return;
  std::string& known = endpoints_[kStandbyEndpointKey];
  if (known == endpoint) return;
  spdlog::info("host {}: the standby coordinator listens at {} now", host_id_, endpoint);
  known = endpoint;
}

bool CoordinatorClient::Reattach(const std::string& reason, Clock::time_point now) {
  const auto standby = endpoints_.find(kStandbyEndpointKey);
  if (lost_primary_ || host_id_ == 0 || standby == endpoints_.end()) return false;
  // A fresh socket, not the old one reconnected: the old one's pipe to host 0 outlives a
  // disconnect until ZeroMQ has torn it down, so a message sent meanwhile (the Reattach
  // itself) could go into it and be lost, or reach whatever host 0's address (a DNS name)
  // names next. The old socket is closed at once, with what it still queued.
  auto fresh = Connect(*context_, options_, socket_.get(zmq::sockopt::routing_id), standby->second);
  if (!fresh) {
    spdlog::error("host {}: cannot reach the standby coordinator at {}: {}", host_id_,
                  standby->second, fresh.error());
    return false;
  }
  if (auto replaced = ReplaceSocket(std::move(*fresh)); !replaced) {
    spdlog::error("host {}: {}", host_id_, replaced.error());
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

void CoordinatorClient::ServiceStandbyProbe(Clock::time_point now) {
  while (standby_probe_ && !failure_) {
    auto received = Receive(*standby_probe_, std::chrono::milliseconds(0));
    if (!received) {
      if (!received.error().malformed()) break;
      Drop(received.error().message);
      continue;
    }
    if (!*received) break;
    const ReceivedMessage& message = **received;
    if (message.type == MessageType::kWelcome) {
      auto welcome = message.As<WelcomeMessage>();
      if (!welcome) return Drop(welcome.error());
      return AdoptStandby(std::move(*welcome), now);
    }
    if (message.type == MessageType::kAbort) {
      auto abort = message.As<AbortMessage>();
      if (!abort) return Drop(abort.error());
      failure_ = abort->reason;
      return;
    }
    Drop(fmt::format("a {} message from the standby coordinator before its Welcome",
                     MessageTypeName(message.type)));
  }
  if (standby_probe_ && now >= next_standby_hello_) {
    if (auto sent = Send(*standby_probe_, hello_); !sent) {
      spdlog::debug("host {}: Hello to the standby coordinator at {} not sent: {}", host_id_,
                    options_.standby_endpoint, sent.error());
    }
    next_standby_hello_ = now + options_.liveness.heartbeat_interval;
  }
}

std::expected<void, std::string> CoordinatorClient::ReplaceSocket(zmq::socket_t socket) {
  watch_.reset();  // it watches the socket it replaces
  socket_.set(zmq::sockopt::linger, 0);
  socket_ = std::move(socket);
  auto watch = ConnectionWatch::Create(*context_, socket_);
  if (!watch) return std::unexpected("the connection to the standby coordinator: " + watch.error());
  watch_ = std::move(*watch);
  return {};
}

void CoordinatorClient::AdoptStandby(WelcomeMessage welcome, Clock::time_point now) {
  auto replaced =
      ReplaceSocket(std::move(*standby_probe_));  // the Hello host 0 never took goes nowhere
  standby_probe_.reset();
  if (!replaced) {
    failure_ = replaced.error();
    return;
  }
  coordinator_endpoint_ = options_.standby_endpoint;
  lost_primary_ = "the standby coordinator had taken the job over";
  endpoints_ = std::move(welcome.endpoints);
  welcomed_ = true;
  last_message_ = now;
  spdlog::warn(
      "host {}: host 0's coordinator is gone; the standby coordinator at {}, which took the "
      "job over, admitted this host",
      host_id_, coordinator_endpoint_);
}

void CoordinatorClient::CloseStandbyProbe() {
  if (!standby_probe_) return;
  standby_probe_->set(zmq::sockopt::linger, 0);
  standby_probe_.reset();
}

}  // namespace actex
