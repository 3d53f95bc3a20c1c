#include "actors/actor_io.h"

#include "transport/interrupted.h"

namespace actex {
namespace {

// How often a waiting actor looks at its pipe even without traffic. The pipe is
// polled too, so this only bounds the cost of a lost wake-up.
constexpr std::chrono::milliseconds kPollSlice{200};

}  // namespace

std::expected<std::optional<size_t>, std::string> WaitForAnyUnlessStopped(
    ActorContext& actor, const std::vector<zmq::socket_t*>& sockets) {
  std::vector<zmq::pollitem_t> items;
  for (zmq::socket_t* socket : sockets) {
    items.push_back({socket->handle(), 0, ZMQ_POLLIN, 0});
  }
  items.push_back({actor.pipe().handle(), 0, ZMQ_POLLIN, 0});
  while (true) {
    if (actor.StopRequested()) return std::nullopt;
    try {
      RetryInterrupted([&] { return zmq::poll(items.data(), items.size(), kPollSlice); });
    } catch (const zmq::error_t& error) {
      return std::unexpected(std::string("waiting for a message: ") + error.what());
    }
    for (size_t i = 0; i + 1 < items.size(); ++i) {
      if (items[i].revents & ZMQ_POLLIN) return i;
    }
  }
}

std::expected<std::optional<ReceivedMessage>, std::string> ReceiveUnlessStopped(
    ActorContext& actor, zmq::socket_t& socket) {
  auto ready = WaitForAnyUnlessStopped(actor, {&socket});
  if (!ready) return std::unexpected(ready.error());
  if (!*ready) return std::nullopt;
  auto message = Receive(socket);
  if (!message) return std::unexpected(message.error().message);
  return std::move(*message);
}

std::expected<bool, std::string> WaitWritableUnlessStopped(ActorContext& actor,
                                                           zmq::socket_t& socket) {
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLOUT, 0},
                             {actor.pipe().handle(), 0, ZMQ_POLLIN, 0}};
  while (true) {
    if (actor.StopRequested()) return false;
    try {
      RetryInterrupted([&] { return zmq::poll(items, 2, kPollSlice); });
    } catch (const zmq::error_t& error) {
      return std::unexpected(std::string("waiting to send: ") + error.what());
    }
    if (items[0].revents & ZMQ_POLLOUT) return true;
  }
}

zmq::socket_t MakePipelineSocket(zmq::context_t& context, zmq::socket_type type, int high_water) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::sndhwm, high_water);
  socket.set(zmq::sockopt::rcvhwm, high_water);
  socket.set(zmq::sockopt::linger, 0);
  return socket;
}

}  // namespace actex
