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

// Why an actor's wait or send ended without its result: the parent asked the actor
// to stop (a normal end: the body returns at once, listing nothing still open), or
// a socket or a peer failed. It is the one way actors say "stopped": every wrapper
// below returns std::expected<T, ActorHalt>, and so do an actor's own steps, until
// the body turns it into its result with EndActor.
struct ActorHalt {
  // kDrainRequested only from a wait that asked to hear it (wake_on_drain).
  enum class Kind { kStopRequested, kDrainRequested, kFailed };
  Kind kind = Kind::kFailed;
  std::string message;  // kFailed: what went wrong, for people

  static ActorHalt Stopped() { return {Kind::kStopRequested, ""}; }
  static ActorHalt Draining() { return {Kind::kDrainRequested, ""}; }
  static std::unexpected<ActorHalt> Failed(std::string message) {
    return std::unexpected(ActorHalt{Kind::kFailed, std::move(message)});
  }
  bool stop_requested() const { return kind == Kind::kStopRequested; }
};

// The body's result for a halt: success when the parent asked it to stop (or drain),
// else the failure's message.
inline std::expected<void, std::string> EndActor(const ActorHalt& halt) {
  if (halt.kind != ActorHalt::Kind::kFailed) return {};
  return std::unexpected(halt.message);
}
inline std::expected<void, std::string> EndActor(const std::expected<void, ActorHalt>& result) {
  return result ? std::expected<void, std::string>() : EndActor(result.error());
}

// Pipeline sockets block on full queues (that is the back-pressure that keeps memory
// flat), but an actor must still hear its parent's stop request while it waits.
// These wrappers wait on the socket and the actor's pipe together.

// Receives the next message.
std::expected<ReceivedMessage, ActorHalt> ReceiveUnlessStopped(ActorContext& actor,
                                                               zmq::socket_t& socket);

// Polls `items` (with the actor's pipe added) until one of them has an event it asks
// for, setting their revents. With `wake_on_drain`, a drain request ends the wait
// too (kDrainRequested).
std::expected<void, ActorHalt> PollUnlessStopped(ActorContext& actor,
                                                 std::vector<zmq::pollitem_t>& items,
                                                 bool wake_on_drain = false);

// Index of the first of `sockets` with a message waiting. With `wake_on_drain`, a
// drain request ends the wait too (kDrainRequested).
std::expected<size_t, ActorHalt> WaitForAnyUnlessStopped(ActorContext& actor,
                                                         const std::vector<zmq::socket_t*>& sockets,
                                                         bool wake_on_drain = false);

// Sends once the peer's queue has room (nothing is sent when a stop comes first).
template <typename T>
std::expected<void, ActorHalt> SendUnlessStopped(ActorContext& actor, zmq::socket_t& socket,
                                                 const T& message,
                                                 std::vector<zmq::message_t> payloads = {});

// Waits until `socket` can take a message without blocking.
std::expected<void, ActorHalt> WaitWritableUnlessStopped(ActorContext& actor,
                                                         zmq::socket_t& socket);

template <typename T>
std::expected<void, ActorHalt> SendUnlessStopped(ActorContext& actor, zmq::socket_t& socket,
                                                 const T& message,
                                                 std::vector<zmq::message_t> payloads) {
  while (true) {
    if (auto writable = WaitWritableUnlessStopped(actor, socket); !writable) return writable;
    // Offered without waiting: the peer may have left (a stopping pipeline's next
    // actor) or filled its queue since the poll, and a blocking send would then wait
    // for ever, deaf to the stop request. Nothing sent: poll again.
    auto sent = TrySend(socket, message, payloads);
    if (!sent) return ActorHalt::Failed(sent.error());
    if (*sent) return {};
  }
}

// A socket set up the way every pipeline link is: bounded queue, short linger.
zmq::socket_t MakePipelineSocket(zmq::context_t& context, zmq::socket_type type, int high_water);

}  // namespace actex

#endif  // ACTEX_ACTORS_ACTOR_IO_H_
