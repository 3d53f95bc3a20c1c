#include "coordination/monitor_relay.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "base/log_sampling.h"
#include "transport/interrupted.h"
#include "transport/wire.h"

namespace actex {
namespace {

// A MonitorEvent is 2 frames and a subscription 1; more frames are only drained.
constexpr size_t kMaxKeptFrames = 3;

// Receives one whole multipart message without blocking, keeping its first
// kMaxKeptFrames frames; `count` is how many it had. False when none was waiting.
bool ReceiveWhole(zmq::socket_t& from, std::vector<zmq::message_t>& frames, size_t& count,
                  const char* what) {
  frames.clear();
  count = 0;
  for (bool more = true; more;) {
    zmq::message_t frame;
    try {
      // The rest of a multipart message is always there once its first frame is.
      if (!from.recv(frame, count == 0 ? zmq::recv_flags::dontwait : zmq::recv_flags::none)) {
        return count > 0;
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR && count > 0) continue;
      if (e.num() != EINTR) spdlog::warn("monitor relay: receiving {}: {}", what, e.what());
      return count > 0;
    }
    more = frame.more();
    if (++count <= kMaxKeptFrames) frames.push_back(std::move(frame));
  }
  return true;
}

// Why `frames` (of `count` in all) is not one node's MonitorEvent that a monitor
// would accept, or empty.
std::string RefuseEvent(const std::vector<zmq::message_t>& frames, size_t count) {
  if (count != 2) return fmt::format("{} frame(s), a MonitorEvent has 2", count);
  std::vector<zmq::message_t> copies;
  for (const zmq::message_t& frame : frames) copies.emplace_back(frame.data(), frame.size());
  auto message = DecodeMessage(std::move(copies));
  if (!message) return message.error().message;
  auto event = message->As<MonitorEventMessage>();
  if (!event) return event.error();
  // A stranger must not declare a host lost or send monitors elsewhere.
  return event->from_coordinator()
             ? fmt::format("a \"{}\" event, which only the coordinator publishes", event->kind)
             : "";
}

// Why `frames` is not one (un)subscription, or empty: a single frame whose first
// byte is 1 (subscribe) or 0 (unsubscribe), followed by the topic.
std::string RefuseSubscription(const std::vector<zmq::message_t>& frames, size_t count) {
  if (count != 1) return fmt::format("{} frames, a subscription has 1", count);
  const auto* bytes = static_cast<const uint8_t*>(frames[0].data());
  if (frames[0].size() == 0 || bytes[0] > 1) return "a frame that is no (un)subscription";
  return "";
}

}  // namespace

void MonitorRelay::Drop(const char* what, const std::string& why) {
  ++dropped_messages_;
  if (ShouldLogOccurrence(dropped_messages_)) {
    spdlog::warn("monitor relay: dropped {} ({} dropped so far): {}", what, dropped_messages_, why);
  }
}

bool MonitorRelay::ForwardOne(zmq::socket_t& from, zmq::socket_t& to, const char* what,
                              bool events) {
  std::vector<zmq::message_t> frames;
  size_t count = 0;
  if (!ReceiveWhole(from, frames, count, what)) return false;
  const std::string refused =
      events ? RefuseEvent(frames, count) : RefuseSubscription(frames, count);
  if (!refused.empty()) {
    Drop(what, refused);
    return true;
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    const bool more = i + 1 < frames.size();
    try {
      // Never blocks: the XPUB drops for a full subscriber, the XSUB queues.
      if (!to.send(frames[i], more ? zmq::send_flags::sndmore | zmq::send_flags::dontwait
                                   : zmq::send_flags::dontwait)) {
        return true;
      }
    } catch (const zmq::error_t& e) {
      spdlog::warn("monitor relay: forwarding {}: {}", what, e.what());
      return true;
    }
  }
  return true;
}

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
    if (options.security) {
      if (auto secured = options.security->ApplyServer(publishers); !secured) {
        return std::unexpected(fmt::format("the {}: {}", role, secured.error()));
      }
    }
    RetryInterrupted([&] { publishers.bind("tcp://" + address); });

    role = "monitor feed (XPUB)";
    address = fmt::format("{}:{}", options.bind_address, options.subscriber_port);
    subscribers = zmq::socket_t(context, zmq::socket_type::xpub);
    subscribers.set(zmq::sockopt::linger, 0);
    subscribers.set(zmq::sockopt::sndhwm, options.high_water_mark);
    subscribers.set(zmq::sockopt::xpub_nodrop, false);
    // A monitor only ever sends (un)subscriptions, which are tiny.
    subscribers.set(zmq::sockopt::maxmsgsize, int64_t{4096});
    if (options.security) {
      if (auto secured = options.security->ApplyServer(subscribers); !secured) {
        return std::unexpected(fmt::format("the {}: {}", role, secured.error()));
      }
    }
    RetryInterrupted([&] { subscribers.bind("tcp://" + address); });
  } catch (const zmq::error_t& e) {
    return std::unexpected(fmt::format("cannot bind the {} to {}: {}", role, address, e.what()));
  }
  return std::unique_ptr<MonitorRelay>(
      new MonitorRelay(std::move(publishers), std::move(subscribers)));
}

void MonitorRelay::Publish(const MonitorEventMessage& event) {
  if (auto sent = Send(subscribers_, event); !sent) {
    spdlog::warn("monitor relay: cannot publish the coordinator's \"{}\" event: {}", event.kind,
                 sent.error());
  }
}

size_t MonitorRelay::ForwardEvents(size_t max_messages) {
  const uint64_t dropped_before = dropped_messages_;
  size_t taken = 0;
  while (taken < max_messages && ForwardOne(publishers_, subscribers_, "an event", true)) ++taken;
  const size_t forwarded = taken - static_cast<size_t>(dropped_messages_ - dropped_before);
  events_forwarded_ += forwarded;
  return forwarded;
}

size_t MonitorRelay::ForwardSubscriptions(size_t max_messages) {
  const uint64_t dropped_before = dropped_messages_;
  size_t taken = 0;
  while (taken < max_messages && ForwardOne(subscribers_, publishers_, "a subscription", false)) {
    ++taken;
  }
  return taken - static_cast<size_t>(dropped_messages_ - dropped_before);
}

}  // namespace actex
