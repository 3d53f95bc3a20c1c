#include "transport/monitor_relay.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <utility>

namespace actex {
namespace {

// Moves one whole multipart message from `from` to `to` if one is waiting. Returns
// false when none was. Frames that cannot be sent are dropped (the message is
// still drained whole, so the next one starts clean).
bool ForwardOne(zmq::socket_t& from, zmq::socket_t& to, const char* what) {
  zmq::message_t frame;
  try {
    if (!from.recv(frame, zmq::recv_flags::dontwait)) return false;
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) spdlog::warn("monitor relay: receiving {}: {}", what, e.what());
    return false;
  }
  bool sending = true;
  while (true) {
    const bool more = frame.more();
    if (sending) {
      try {
        // Never blocks: the XPUB drops for a full subscriber, the XSUB queues.
        sending = to.send(frame, more ? zmq::send_flags::sndmore | zmq::send_flags::dontwait
                                      : zmq::send_flags::dontwait)
                      .has_value();
      } catch (const zmq::error_t& e) {
        spdlog::warn("monitor relay: forwarding {}: {}", what, e.what());
        sending = false;
      }
    }
    if (!more) return true;
    try {
      // The rest of a multipart message is always there once its first frame is.
      if (!from.recv(frame, zmq::recv_flags::none)) return true;
    } catch (const zmq::error_t& e) {
      spdlog::warn("monitor relay: receiving {}: {}", what, e.what());
      return true;
    }
  }
}

}  // namespace

MonitorRelay::MonitorRelay(zmq::socket_t publishers, zmq::socket_t subscribers)
    : publishers_(std::move(publishers)), subscribers_(std::move(subscribers)) {}

std::expected<std::unique_ptr<MonitorRelay>, std::string> MonitorRelay::Bind(
    zmq::context_t& context, const MonitorRelayOptions& options) {
  zmq::socket_t publishers;
  zmq::socket_t subscribers;
  std::string address;
  const char* role = "";
  try {
    role = "monitor event collector (XSUB)";
    address = fmt::format("{}:{}", options.bind_address, options.publisher_port);
    publishers = zmq::socket_t(context, zmq::socket_type::xsub);
    publishers.set(zmq::sockopt::linger, 0);
    publishers.set(zmq::sockopt::rcvhwm, options.high_water_mark);
    publishers.set(zmq::sockopt::maxmsgsize, options.max_frame_bytes);
    publishers.bind("tcp://" + address);

    role = "monitor feed (XPUB)";
    address = fmt::format("{}:{}", options.bind_address, options.subscriber_port);
    subscribers = zmq::socket_t(context, zmq::socket_type::xpub);
    subscribers.set(zmq::sockopt::linger, 0);
    subscribers.set(zmq::sockopt::sndhwm, options.high_water_mark);
    subscribers.set(zmq::sockopt::xpub_nodrop, false);
    // A monitor only ever sends (un)subscriptions, which are tiny.
    subscribers.set(zmq::sockopt::maxmsgsize, int64_t{4096});
    subscribers.bind("tcp://" + address);
  } catch (const zmq::error_t& e) {
    return std::unexpected(fmt::format("cannot bind the {} to {}: {}", role, address, e.what()));
  }
  return std::unique_ptr<MonitorRelay>(
      new MonitorRelay(std::move(publishers), std::move(subscribers)));
}

size_t MonitorRelay::ForwardEvents(size_t max_messages) {
  size_t forwarded = 0;
  while (forwarded < max_messages && ForwardOne(publishers_, subscribers_, "an event")) {
    ++forwarded;
  }
  events_forwarded_ += forwarded;
  return forwarded;
}

size_t MonitorRelay::ForwardSubscriptions(size_t max_messages) {
  size_t forwarded = 0;
  while (forwarded < max_messages && ForwardOne(subscribers_, publishers_, "a subscription")) {
    ++forwarded;
  }
  return forwarded;
}

}  // namespace actex
