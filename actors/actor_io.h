#ifndef ACTEX_ACTORS_ACTOR_IO_H_
#define ACTEX_ACTORS_ACTOR_IO_H_

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "transport/actor.h"
#include "transport/wire.h"

namespace actex {

// Pipeline sockets block on full queues (that is the back-pressure that keeps memory
// flat), but an actor must still hear its parent's stop request while it waits.
// These wrappers wait on the socket and the actor's pipe together.

// Receives the next message; std::nullopt when the parent asked the actor to stop.
std::expected<std::optional<ReceivedMessage>, std::string> ReceiveUnlessStopped(
    ActorContext& actor, zmq::socket_t& socket);

// Index of the first of `sockets` with a message waiting; std::nullopt on stop.
std::expected<std::optional<size_t>, std::string> WaitForAnyUnlessStopped(
    ActorContext& actor, const std::vector<zmq::socket_t*>& sockets);

// Sends once the peer's queue has room; returns false when the parent asked the
// actor to stop first (nothing was sent).
template <typename T>
std::expected<bool, std::string> SendUnlessStopped(ActorContext& actor, zmq::socket_t& socket,
                                                   const T& message,
                                                   std::vector<zmq::message_t> payloads = {});

// Waits until `socket` can take a message without blocking; false on stop.
std::expected<bool, std::string> WaitWritableUnlessStopped(ActorContext& actor,
                                                           zmq::socket_t& socket);

template <typename T>
std::expected<bool, std::string> SendUnlessStopped(ActorContext& actor, zmq::socket_t& socket,
                                                   const T& message,
                                                   std::vector<zmq::message_t> payloads) {
  auto writable = WaitWritableUnlessStopped(actor, socket);
  if (!writable || !*writable) return writable;
  auto sent = Send(socket, message, std::move(payloads));
  if (!sent) return std::unexpected(sent.error());
  return true;
}

// A socket set up the way every pipeline link is: bounded queue, short linger.
zmq::socket_t MakePipelineSocket(zmq::context_t& context, zmq::socket_type type, int high_water);

}  // namespace actex

#endif  // ACTEX_ACTORS_ACTOR_IO_H_
