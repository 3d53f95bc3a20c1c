#include "transport/connection_watch.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <zmq.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "transport/interrupted.h"

namespace actex {
namespace {

constexpr int kWatchedEvents = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

// Receives one frame without blocking; false when none is waiting (or the context ends).
bool ReceiveNow(zmq::socket_t& socket, zmq::message_t& frame) {
  while (true) {
    try {
      return socket.recv(frame, zmq::recv_flags::dontwait).has_value();
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      spdlog::warn("connection watch: reading an event failed: {}", e.what());
      return false;
    }
  }
}

}  // namespace

ConnectionWatch::ConnectionWatch(void* watched, zmq::socket_t events)
    : watched_(watched), events_(std::move(events)) {}

ConnectionWatch::~ConnectionWatch() {
  // Stops the monitor before its reader closes: the watched socket's later events
  // (its connections ending while it lingers) must find no monitor to send to.
  zmq_socket_monitor(watched_, nullptr, 0);
}

std::expected<std::unique_ptr<ConnectionWatch>, std::string> ConnectionWatch::Create(
    zmq::context_t& context, zmq::socket_t& watched) {
  // The monitor binds this inproc name itself; it only has to be unique among live
  // watches, which the watched socket's address is (the attempt covers leftovers).
  const auto address = reinterpret_cast<std::uintptr_t>(watched.handle());
  std::string endpoint;
  for (int attempt = 0;; ++attempt) {
    endpoint = fmt::format("inproc://actex-connection-watch/{:x}/{}", address, attempt);
    if (zmq_socket_monitor(watched.handle(), endpoint.c_str(), kWatchedEvents) == 0) break;
    if (zmq_errno() != EADDRINUSE || attempt >= 100) {
      return std::unexpected(
          fmt::format("cannot watch the socket's connections: {}", zmq_strerror(zmq_errno())));
    }
  }
  try {
    zmq::socket_t events(context, zmq::socket_type::pair);
    events.set(zmq::sockopt::linger, 0);
    RetryInterrupted([&] { events.connect(endpoint); });
    return std::unique_ptr<ConnectionWatch>(
        new ConnectionWatch(watched.handle(), std::move(events)));
  } catch (const zmq::error_t& e) {
    zmq_socket_monitor(watched.handle(), nullptr, 0);
    return std::unexpected(fmt::format("cannot read the socket's connection events: {}", e.what()));
  }
}

std::vector<ConnectionEvent> ConnectionWatch::Drain() {
  std::vector<ConnectionEvent> events;
  zmq::message_t header;
  while (ReceiveNow(events_, header)) {
    // Each event is two frames: 6 bytes (uint16 event, uint32 value), then the
    // endpoint. A malformed one (never seen from libzmq) is skipped whole.
    zmq::message_t endpoint;
    const bool has_endpoint = header.more() && ReceiveNow(events_, endpoint);
    while (endpoint.more() && ReceiveNow(events_, endpoint)) {
    }
    if (header.size() != sizeof(uint16_t) + sizeof(uint32_t) || !has_endpoint) continue;
    uint16_t id = 0;
    uint32_t value = 0;
    std::memcpy(&id, header.data(), sizeof(id));
    std::memcpy(&value, static_cast<const char*>(header.data()) + sizeof(id), sizeof(value));
    ConnectionEvent event{ConnectionEvent::Kind::kAccepted, static_cast<int>(value),
                          endpoint.to_string()};
    switch (id) {
      case ZMQ_EVENT_ACCEPTED:
        event.kind = ConnectionEvent::Kind::kAccepted;
        break;
      case ZMQ_EVENT_CONNECTED:
        event.kind = ConnectionEvent::Kind::kConnected;
        break;
      case ZMQ_EVENT_DISCONNECTED:
        event.kind = ConnectionEvent::Kind::kDisconnected;
        break;
      case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        event.kind = ConnectionEvent::Kind::kHandshakeFailed;
        break;
      default:
        continue;
    }
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace actex
