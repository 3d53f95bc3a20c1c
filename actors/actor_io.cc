#include "actors/actor_io.h"

#include "transport/interrupted.h"

namespace actex {
namespace {

// How often a waiting actor looks at its pipe even without traffic. The pipe is
// polled too, so this only bounds the cost of a lost wake-up.
constexpr std::chrono::milliseconds kPollSlice{200};

}  // namespace

std::expected<void, ActorHalt> PollUnlessStopped(ActorContext& actor,
                                                 std::vector<zmq::pollitem_t>& items,
                                                 bool wake_on_drain) {
  items.push_back({actor.pipe().handle(), 0, ZMQ_POLLIN, 0});
  auto poll = [&]() -> std::expected<void, ActorHalt> {
    while (true) {
      if (actor.StopRequested()) return std::unexpected(ActorHalt::Stopped());
      if (wake_on_drain && actor.DrainRequested()) return std::unexpected(ActorHalt::Draining());
      try {
        RetryInterrupted([&] { return zmq::poll(items.data(), items.size(), kPollSlice); });
      } catch (const zmq::error_t& error) {
        return ActorHalt::Failed(std::string("waiting for a socket: ") + error.what());
      }
      for (size_t i = 0; i + 1 < items.size(); ++i) {
        if (items[i].revents != 0) return {};
      }
    }
  };
  auto polled = poll();
  items.pop_back();
  return polled;
}

std::expected<size_t, ActorHalt> WaitForAnyUnlessStopped(ActorContext& actor,
                                                         const std::vector<zmq::socket_t*>& sockets,
                                                         bool wake_on_drain) {
  std::vector<zmq::pollitem_t> items;
  for (zmq::socket_t* socket : sockets) {
    items.push_back({socket->handle(), 0, ZMQ_POLLIN, 0});
  }
  if (auto polled = PollUnlessStopped(actor, items, wake_on_drain); !polled) {
    return std::unexpected(polled.error());
  }
  for (size_t i = 0;; ++i) {
    if (items[i].revents & ZMQ_POLLIN) return i;
  }
}

std::expected<ReceivedMessage, ActorHalt> ReceiveUnlessStopped(ActorContext& actor,
                                                               zmq::socket_t& socket) {
  if (auto ready = WaitForAnyUnlessStopped(actor, {&socket}); !ready) {
    return std::unexpected(ready.error());
  }
  auto message = Receive(socket);
  if (!message) return ActorHalt::Failed(message.error().message);
  return std::move(*message);
}

std::expected<void, ActorHalt> WaitWritableUnlessStopped(ActorContext& actor,
                                                         zmq::socket_t& socket) {
  std::vector<zmq::pollitem_t> items = {{socket.handle(), 0, ZMQ_POLLOUT, 0}};
  return PollUnlessStopped(actor, items);
}

zmq::socket_t MakePipelineSocket(zmq::context_t& context, zmq::socket_type type, int high_water) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::sndhwm, high_water);
  socket.set(zmq::sockopt::rcvhwm, high_water);
  socket.set(zmq::sockopt::linger, 0);
  return socket;
}

}  // namespace actex
