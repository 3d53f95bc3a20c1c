#include "coordination/coordinator.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/unix_time.h"
#include "coordination/control_message.h"
#include "coordination/coordinator_session.h"
#include "coordination/coordinator_sockets.h"
#include "transport/connection_watch.h"
#include "transport/interrupted.h"
#include "transport/numeric_endpoint.h"
#include "transport/wire.h"

namespace actex {
namespace {

using Clock = std::chrono::steady_clock;

// Messages taken from one socket per turn of the loop, so a flood on one socket
// cannot starve the others (or the deadlines).
constexpr size_t kMaxMessagesPerTurn = 1000;

class Coordinator {
 public:
  Coordinator(ActorContext& actor, CoordinatorOptions options)
      : actor_(actor),
        options_(std::move(options)),
        counters_(options_.counters),
        session_(options_, *counters_) {}

  std::expected<void, std::string> Run();

 private:
  // Host 0's: connects the link to the standby once the session knows where it is.
  std::expected<void, std::string> LinkStandby();
  // Host 0's: tells the monitors where the standby's monitors attach (a "standby"
  // event), so that one attached here follows the job there when host 0 is lost: when
  // the link is made, when a monitor subscribes, and every heartbeat interval for
  // monitors that attach later (the XPUB passes on only a topic's first subscription).
  // Always the same bytes, so a monitor that heard it shows it once.
  void AnnounceStandby();
  // Sends what the session queued, one message per (identity, message).
  void Flush();
  std::chrono::milliseconds Wait(Clock::time_point now) const;

  ActorContext& actor_;
  CoordinatorOptions options_;
  std::shared_ptr<CoordinatorCounters> counters_;
  CoordinatorSession session_;
  CoordinatorSockets sockets_;
  zmq::socket_t standby_link_;  // DEALER to the standby's control ROUTER (host 0's)
  // Declared after standby_link_, so it is destroyed (and stops watching) first.
  std::unique_ptr<ConnectionWatch> standby_watch_;
  std::string linked_standby_;    // where standby_link_ connects
  double standby_linked_at_ = 0;  // unix seconds: the "standby" event's time
  Clock::time_point next_standby_announcement_;
};

std::expected<void, std::string> Coordinator::LinkStandby() {
  const std::string& endpoint = *session_.standby_endpoint();
  linked_standby_ = endpoint;
  // A standby that came back listens elsewhere: the old link goes, its watch first.
  standby_watch_.reset();
  try {
    standby_link_ = zmq::socket_t(actor_.context(), zmq::socket_type::dealer);
    // The last update may say that host 0 hands the job over.
    standby_link_.set(zmq::sockopt::linger, static_cast<int>(options_.linger.count()));
    standby_link_.set(zmq::sockopt::sndtimeo, 0);  // never block the coordinator
    standby_link_.set(zmq::sockopt::maxmsgsize, kMaxControlFrameBytes);
    if (options_.security) {
      if (auto secured = options_.security->ApplyClient(standby_link_); !secured) {
        return std::unexpected("the link to the standby: " + secured.error());
      }
    }
    RetryInterrupted([&] { standby_link_.connect(NumericEndpoint(endpoint)); });
  } catch (const zmq::error_t& e) {
    return std::unexpected(
        fmt::format("cannot connect to the standby coordinator at {}: {}", endpoint, e.what()));
  }
  auto watch = ConnectionWatch::Create(actor_.context(), standby_link_);
  if (!watch) return std::unexpected("the link to the standby: " + watch.error());
  standby_watch_ = std::move(*watch);
  standby_linked_at_ = UnixSeconds();
  AnnounceStandby();
  return {};
}

void Coordinator::AnnounceStandby() {
  next_standby_announcement_ = Clock::now() + options_.liveness.heartbeat_interval;
  const std::string feed = CoordinatorPortEndpoint(linked_standby_, kMonitorPortOffset);
  if (feed.empty()) return;
  MonitorEventMessage event;
  event.kind = kStandbyEventKind;
  event.host_id = options_.standby_host;
  event.num_hosts = options_.num_hosts;
  event.message = feed;
  event.unix_seconds = standby_linked_at_;
  sockets_.relay->Publish(event);
}

void Coordinator::Flush() {
  for (MonitorEventMessage& event : session_.TakeMonitorEvents()) {
    event.unix_seconds = UnixSeconds();
    sockets_.relay->Publish(event);
  }
  for (OutgoingMessage& outgoing : session_.TakeOutgoing()) {
    if (outgoing.identity == CoordinatorSession::kStandbyLink) {
      // A full queue drops the update; the standby's confirm asks for it again.
      if (auto sent = SendEncoded(standby_link_, outgoing.type, outgoing.body, {}); !sent) {
        spdlog::debug("coordinator: an update to the standby was not sent: {}", sent.error());
      }
      continue;
    }
    zmq::message_t identity(outgoing.identity.data(), outgoing.identity.size());
    try {
      // A ROUTER never blocks: a message to a peer that is gone or full is dropped.
      if (!sockets_.control.send(identity, zmq::send_flags::sndmore)) continue;
    } catch (const zmq::error_t& e) {
      spdlog::warn("coordinator: cannot send to a node: {}", e.what());
      continue;
    }
    if (auto sent = SendEncoded(sockets_.control, outgoing.type, outgoing.body, {}); !sent) {
      spdlog::warn("coordinator: cannot send to a node: {}", sent.error());
    }
  }
}

std::chrono::milliseconds Coordinator::Wait(Clock::time_point now) const {
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(session_.NextDeadline() - now);
  return std::clamp(wait, std::chrono::milliseconds(0), options_.liveness.heartbeat_interval);
}

std::expected<void, std::string> Coordinator::Run() {
  auto bound = CoordinatorSockets::Bind(actor_.context(), options_);
  if (!bound) return std::unexpected(bound.error());
  sockets_ = std::move(*bound);
  actor_.SignalReady();
  if (options_.standby) {
    spdlog::info("coordinator (standby on host {}): listening on {} for host 0's lease log",
                 options_.standby_host, counters_->control_endpoint);
  } else {
    spdlog::info(
        "coordinator: listening on {}:{} (monitors attach to port {}, nodes publish to port {}) "
        "for "
        "{} host(s); {}",
        options_.bind_address, options_.port, options_.monitor_port, options_.monitor_collect_port,
        options_.num_hosts,
        options_.security ? "CURVE with job key " + options_.security->key_id()
                          : std::string("no job key: anyone who reaches these ports can join"));
  }
  session_.Start(Clock::now());
  while (!session_.Finished(Clock::now())) {
    std::vector<zmq::pollitem_t> items = {
        {actor_.pipe().handle(), 0, ZMQ_POLLIN, 0},
        {sockets_.control.handle(), 0, ZMQ_POLLIN, 0},
        {sockets_.control_watch->socket().handle(), 0, ZMQ_POLLIN, 0},
        {sockets_.relay->publishers().handle(), 0, ZMQ_POLLIN, 0},
        {sockets_.relay->subscribers().handle(), 0, ZMQ_POLLIN, 0},
    };
    for (auto& relay_watch : sockets_.relay_watches) {
      items.push_back({relay_watch->socket().handle(), 0, ZMQ_POLLIN, 0});
    }
    if (standby_link_) {
      items.push_back({standby_link_.handle(), 0, ZMQ_POLLIN, 0});
      items.push_back({standby_watch_->socket().handle(), 0, ZMQ_POLLIN, 0});
    }
    try {
      zmq::poll(items.data(), items.size(), Wait(Clock::now()));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) {
        session_.Abort(fmt::format("the coordinator's poll failed: {}", e.what()), Clock::now());
        Flush();
        break;
      }
    }
    session_.Resume(Clock::now());
    if ((items[0].revents & ZMQ_POLLIN) != 0 && actor_.StopRequested()) {
      session_.Abort(session_.in_rendezvous()
                         ? "the coordinator (host 0) was stopped before every host joined"
                         : "the coordinator (host 0) was stopped before the job finished",
                     Clock::now());
      Flush();
      break;
    }
    for (size_t taken = 0; taken < kMaxMessagesPerTurn; ++taken) {
      auto control = ReceiveControl(sockets_.control);
      if (!control) {
        session_.Abort("the coordinator's control socket failed: " + control.error(), Clock::now());
        break;
      }
      if (!*control) break;
      ControlMessage& message = **control;
      session_.Handle(message.identity, message.fd, message.address, message.message, Clock::now());
    }
    for (const ConnectionEvent& event : sockets_.control_watch->Drain()) {
      session_.OnConnectionEvent(event, Clock::now());
    }
    for (auto& relay_watch : sockets_.relay_watches) {
      for (const ConnectionEvent& event : relay_watch->Drain()) {
        // Only refusals: the monitor ports' connections are no host's.
        if (event.kind == ConnectionEvent::Kind::kHandshakeFailed) {
          session_.OnConnectionEvent(event, Clock::now());
        }
      }
    }
    while (standby_link_) {
      auto from_standby = Receive(standby_link_, std::chrono::milliseconds(0));
      if (from_standby && !*from_standby) break;
      session_.HandleStandbyLink(
          from_standby ? std::expected<ReceivedMessage, WireError>(std::move(**from_standby))
                       : std::unexpected(from_standby.error()),
          Clock::now());
      if (!from_standby && !from_standby.error().malformed()) break;
    }
    if (standby_watch_) {
      for (const ConnectionEvent& event : standby_watch_->Drain()) {
        session_.OnStandbyLinkEvent(event, Clock::now());
      }
    }
    if (sockets_.relay->ForwardSubscriptions(kMaxMessagesPerTurn) > 0 ||
        Clock::now() >= next_standby_announcement_) {
      AnnounceStandby();
    }
    counters_->monitor_events_relayed += sockets_.relay->ForwardEvents(kMaxMessagesPerTurn);
    counters_->dropped_monitor_messages = sockets_.relay->dropped_messages();
    session_.Tick(Clock::now());
    if (session_.standby_endpoint() && *session_.standby_endpoint() != linked_standby_) {
      if (auto linked = LinkStandby(); !linked) session_.Abort(linked.error(), Clock::now());
    }
    Flush();
  }
  return session_.result();
}

}  // namespace

std::expected<std::unique_ptr<Actor>, std::string> StartCoordinator(zmq::context_t& context,
                                                                    CoordinatorOptions options) {
  if (auto checked = CheckCoordinatorOptions(options); !checked) {
    return std::unexpected("coordinator: " + checked.error());
  }
  if (!options.counters) options.counters = std::make_shared<CoordinatorCounters>();
  return Actor::Start(context, "coordinator", [options = std::move(options)](ActorContext& actor) {
    Coordinator coordinator(actor, options);
    return coordinator.Run();
  });
}

}  // namespace actex
