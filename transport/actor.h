#ifndef ACTEX_TRANSPORT_ACTOR_H_
#define ACTEX_TRANSPORT_ACTOR_H_

#include <atomic>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <zmq.hpp>

namespace actex {

// What an actor's body sees: the shared ZeroMQ context (to create the sockets it
// owns) and its end of the pipe to the parent.
class ActorContext {
 public:
  zmq::context_t& context() { return context_; }
  // The actor's end of the PAIR pipe. The parent sends "$STOP" (a single frame) to
  // ask the actor to finish early, "$DRAIN" to ask it to end its work normally but
  // soon; bodies poll it beside their own sockets.
  zmq::socket_t& pipe() { return pipe_; }
  // Call once, after the body has bound/connected its sockets, so Actor::Start can
  // return knowing the actor is reachable. A body that fails before this returns an
  // error instead; Start then returns that error. Further calls do nothing. A body
  // that returns successfully without calling it is treated as ready at its end.
  void SignalReady();
  // True once "$STOP" arrived on the pipe (checked without blocking). Also true when
  // the context is shutting down, since the body must then finish as well.
  bool StopRequested();
  // True once "$DRAIN" arrived: the body should end its streams normally at the next
  // point where that loses nothing (an actor that knows no such point ignores it).
  bool DrainRequested();

  ActorContext(zmq::context_t& context, zmq::socket_t pipe);

 private:
  zmq::context_t& context_;
  zmq::socket_t pipe_;
  bool ready_sent_ = false;
  bool stop_seen_ = false;
  bool drain_seen_ = false;
};

// An actor is a thread that owns its sockets and talks to the rest only through
// messages, joined to its parent by an inproc PAIR pipe, with a ready handshake:
// Start() blocks until the body calls SignalReady() (or fails). When the body returns,
// its result is sent on the pipe as the last message and Join() returns it.
//
// The body runs on its own thread; an exception escaping it is caught there, logged,
// and reported like a returned error ("$FAIL <what()>"), so it never ends the process.
// The body must return soon after StopRequested() turns true, or the destructor (and
// Join) wait for it. The pipe's endpoint is unique per Actor object, so several
// actors with the same name may live in one context.
class Actor {
 public:
  using Body = std::function<std::expected<void, std::string>(ActorContext&)>;

  static std::expected<std::unique_ptr<Actor>, std::string> Start(zmq::context_t& context,
                                                                  std::string name, Body body);
  // The parent's end of the pipe: readable when the actor has finished (one frame:
  // "$DONE" or "$FAIL <message>"). Use it in zmq::poll beside other sockets.
  zmq::socket_t& pipe() { return pipe_; }
  const std::string& name() const { return name_; }
  // Asks the body to stop (sends "$STOP"); does not wait.
  void RequestStop();
  // Asks the body to drain (sends "$DRAIN"); does not wait.
  void RequestDrain();
  // Waits for the thread and returns the body's result, prefixed with the actor name.
  std::expected<void, std::string> Join();
  ~Actor();  // requests stop and joins if the parent did not

 private:
  Actor(std::string name, zmq::socket_t pipe);
  std::string name_;
  std::string endpoint_;  // the parent's bound end of the pipe
  zmq::socket_t pipe_;
  std::thread thread_;
  std::expected<void, std::string> result_;
  bool joined_ = false;
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_ACTOR_H_
