#include "coordination/coordinator_client.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "base/log_sampling.h"
#include "coordination/rendezvous.h"
#include "transport/interrupted.h"

namespace actex {
namespace {

// Messages handled per Service call, so one call stays short whatever arrives.
constexpr size_t kMaxMessagesPerService = 1000;

}  // namespace

CoordinatorClient::CoordinatorClient(const CoordinatorClientOptions& options,
                                     zmq::context_t& context, const HelloMessage& hello,
                                     zmq::socket_t socket)
    : options_(options),
      context_(&context),
      hello_(hello),
      host_id_(hello.host_id),
      socket_(std::move(socket)) {}

CoordinatorClient::~CoordinatorClient() = default;

std::string CoordinatorClient::CoordinatorName() const {
  return lost_primary_ ? "the standby coordinator at " + coordinator_endpoint_
                       : fmt::format("{}:{}", options_.coordinator_address, options_.port);
}

void CoordinatorClient::Drop(const std::string& why) {
  ++dropped_messages_;
  if (ShouldLogOccurrence(dropped_messages_)) {
    spdlog::warn("host {}: dropped a message from the coordinator ({} so far): {}", host_id_,
                 dropped_messages_, why);
  }
}

void CoordinatorClient::Handle(const ReceivedMessage& message) {
  switch (message.type) {
    case MessageType::kHeartbeat: {
      auto heartbeat = message.As<HeartbeatMessage>();
      if (!heartbeat) return Drop(heartbeat.error());
      heard_sequence_ = std::max(heard_sequence_, heartbeat->sequence);
      LearnStandby(heartbeat->standby);
      return;
    }
    case MessageType::kAbort: {
      auto abort = message.As<AbortMessage>();
      if (!abort) return Drop(abort.error());
      failure_ = abort->reason;
      return;
    }
    case MessageType::kHandOver: {
      auto hand_over = message.As<HandOverMessage>();
      if (!hand_over) return Drop(hand_over.error());
      if (!Reattach(hand_over->reason, Clock::now())) failure_ = hand_over->reason;
      return;
    }
    case MessageType::kWelcome: {
      auto welcome = message.As<WelcomeMessage>();
      if (!welcome) return Drop(welcome.error());
      if (reattach_deadline_) {  // the standby took over
        reattach_deadline_.reset();
        spdlog::warn("host {}: the standby coordinator at {} took over the job", host_id_,
                     coordinator_endpoint_);
        return ResendOpen();
      }
      if (welcomed_) return Drop("a second Welcome");
      endpoints_ = std::move(welcome->endpoints);
      welcomed_ = true;
      CloseStandbyProbe();
      return;
    }
    case MessageType::kBarrierRelease: {
      auto release = message.As<BarrierReleaseMessage>();
      if (!release) return Drop(release.error());
      if (!welcomed_) return Drop("a barrier release before the Welcome");
      released_barriers_.insert(release->name);
      entered_barriers_.erase(release->name);
      if (release->name == kFinalBarrierName) finished_ = true;
      return;
    }
    case MessageType::kLeaseGrant: {
      auto grant = message.As<LeaseGrantMessage>();
      if (!grant) return Drop(grant.error());
      // The other hosts of its replica get copies of a writer host's grants.
      if (grant->holder == host_id_ && open_requests_.contains(grant->request)) {
        if (grant->chunk >= 0) held_.insert(grant->chunk);
        if (grant->chunk >= 0 || grant->finished) open_requests_.erase(grant->request);
      }
      grants_.push_back(*grant);
      return;
    }
    case MessageType::kListingAck: {
      auto ack = message.As<ListingAckMessage>();
      if (!ack) return Drop(ack.error());
      open_intents_.erase(ack->request);
      listing_acks_.push_back(*ack);
      return;
    }
    default:
      return Drop(fmt::format("a {} message", MessageTypeName(message.type)));
  }
}

std::expected<void, std::string> CoordinatorClient::Service() {
  if (failure_) return std::unexpected(*failure_);
  if (finished_) return {};
  if (standby_probe_) ServiceStandbyProbe(Clock::now());
  // The node calls Service every poll of its loops (a quarter second to an interval).
  // After a gap past the timeout this process was frozen (its ZeroMQ threads too):
  // whatever the coordinator sent meanwhile may not have been received, so its silence
  // is judged afresh from now; a coordinator truly gone is found one timeout later.
  // Host 0's coordinator, frozen with it, says what happened (CoordinatorSession::Resume).
  const auto serviced = Clock::now();
  if (last_serviced_ && serviced - *last_serviced_ >= options_.liveness.heartbeat_timeout &&
      last_message_) {
    last_message_ = serviced;
  }
  last_serviced_ = serviced;
  for (size_t taken = 0; taken < kMaxMessagesPerService && !failure_ && !finished_; ++taken) {
    try {
      const int events = RetryInterrupted([&] { return socket_.get(zmq::sockopt::events); });
      if ((events & ZMQ_POLLIN) == 0) break;
    } catch (const zmq::error_t& e) {
      failure_ = fmt::format("the connection to the coordinator at {} failed: {}",
                             CoordinatorName(), e.what());
      break;
    }
    auto received = Receive(socket_);
    // Only the coordinator is at the other end: anything it sends shows it is alive.
    last_message_ = Clock::now();
    disconnected_at_.reset();
    if (received) {
      Handle(*received);
    } else if (received.error().malformed()) {
      Drop(received.error().message);
    } else {
      failure_ = fmt::format("the connection to the coordinator at {} failed: {}",
                             CoordinatorName(), received.error().message);
    }
  }
  if (failure_) return std::unexpected(*failure_);
  if (finished_) return {};

  const auto now = Clock::now();
  for (const ConnectionEvent& event : watch_->Drain()) {
    if (event.kind == ConnectionEvent::Kind::kHandshakeFailed) {
      ++failed_handshakes_;
      if (ShouldLogOccurrence(failed_handshakes_)) {
        spdlog::warn(
            "host {}: the connection to the coordinator at {} ended during the ZeroMQ handshake "
            "({} so far): does every host have the same --job-key-file (or none)?",
            host_id_, CoordinatorName(), failed_handshakes_);
      }
      continue;
    }
    if (event.kind == ConnectionEvent::Kind::kDisconnected && last_message_ && !disconnected_at_) {
      disconnected_at_ = now;
      spdlog::warn("host {}: the connection to the coordinator at {} closed", host_id_,
                   CoordinatorName());
    }
  }
  // Heartbeats start once the coordinator answered, so none pile up while it is not
  // up yet; it heartbeats every joined host, so it answers within an interval.
  if (last_message_ && now >= next_heartbeat_) {
    SendNow(HeartbeatMessage{host_id_, ++heartbeat_sequence_, heard_sequence_});
    next_heartbeat_ = now + options_.liveness.heartbeat_interval;
  }
  std::optional<std::string> lost;
  if (reattach_deadline_) {
    if (now >= *reattach_deadline_) {
      failure_ =
          fmt::format("lost the coordinator (host 0): {}; {} did not take over within {}",
                      *lost_primary_, CoordinatorName(),
                      SecondsText(2 * options_.liveness.heartbeat_timeout + options_.join_margin));
    }
  } else if (last_message_ && now - *last_message_ >= options_.liveness.heartbeat_timeout) {
    lost = fmt::format("no message for {}", SecondsText(options_.liveness.heartbeat_timeout));
  } else if (disconnected_at_ && now - *disconnected_at_ >= options_.liveness.disconnect_grace) {
    lost = fmt::format("its connection closed and it did not come back within {}",
                       SecondsText(options_.liveness.disconnect_grace));
  }
  if (lost && !Reattach(*lost, now)) {
    failure_ = fmt::format("lost the coordinator ({}): {}",
                           lost_primary_ ? coordinator_endpoint_ : std::string("host 0"), *lost);
  }
  if (failure_) return std::unexpected(*failure_);
  return {};
}

std::expected<void, std::string> CoordinatorClient::WaitAndService(std::chrono::milliseconds wait) {
  if (failure_) return std::unexpected(*failure_);
  std::vector<zmq::pollitem_t> items = {{socket_.handle(), 0, ZMQ_POLLIN, 0},
                                        {watch_->socket().handle(), 0, ZMQ_POLLIN, 0}};
  if (standby_probe_) items.push_back({standby_probe_->handle(), 0, ZMQ_POLLIN, 0});
  try {
    zmq::poll(items.data(), items.size(), std::max(wait, std::chrono::milliseconds(0)));
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) {
      failure_ =
          fmt::format("waiting for the coordinator at {} failed: {}", CoordinatorName(), e.what());
    }
  }
  return Service();
}

std::expected<void, std::string> CoordinatorClient::EnterBarrier(const std::string& name) {
  if (failure_) return std::unexpected(*failure_);
  released_barriers_.erase(name);
  entered_barriers_.insert(name);
  if (reattach_deadline_) return {};  // sent once the standby took over
  if (auto sent = Send(socket_, BarrierMessage{name}); !sent) {
    return std::unexpected(fmt::format("cannot enter barrier '{}' at the coordinator at {}: {}",
                                       name, CoordinatorName(), sent.error()));
  }
  return {};
}

bool CoordinatorClient::BarrierReleased(const std::string& name) const {
  return released_barriers_.contains(name);
}

std::expected<void, std::string> CoordinatorClient::Barrier(const std::string& name,
                                                            std::chrono::milliseconds timeout) {
  if (auto entered = EnterBarrier(name); !entered) return entered;
  const auto deadline = Clock::now() + timeout;
  while (!BarrierReleased(name)) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left <= std::chrono::milliseconds(0)) {
      return std::unexpected(
          fmt::format("barrier '{}' was not released within {}: the coordinator is still "
                      "waiting for other hosts",
                      name, SecondsText(timeout)));
    }
    auto serviced = WaitAndService(std::min(left, options_.liveness.heartbeat_interval));
    if (!serviced) return serviced;
  }
  return {};
}

void CoordinatorClient::ReportFailure(const std::string& reason, bool hand_over) {
  SendNow(FailureMessage{host_id_, reason, hand_over});
}

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

}  // namespace actex
