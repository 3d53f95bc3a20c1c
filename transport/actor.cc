#include "transport/actor.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdint>
#include <exception>
#include <string_view>
#include <system_error>
#include <utility>

#include "transport/interrupted.h"

namespace actex {
namespace {

constexpr std::string_view kReady = "$READY";
constexpr std::string_view kStop = "$STOP";
constexpr std::string_view kDrain = "$DRAIN";
constexpr std::string_view kDone = "$DONE";
constexpr std::string_view kFailPrefix = "$FAIL ";

// Sends one single-frame control message; false when the pipe is gone (context
// terminating, or the peer closed and the frame could not be queued).
bool SendControl(zmq::socket_t& pipe, std::string_view text, zmq::send_flags flags) {
  try {
    return RetryInterrupted(
        [&] { return pipe.send(zmq::buffer(text.data(), text.size()), flags).has_value(); });
  } catch (const zmq::error_t& e) {
    spdlog::warn("actor pipe: could not send {}: {}", text.substr(0, 6), e.what());
    return false;
  }
}

// The whole life of the actor's thread. Everything the body throws stops here: a
// thread that lets an exception escape terminates the process.
void RunBody(zmq::context_t& context, zmq::socket_t pipe, const std::string& name,
             const Actor::Body& body, std::expected<void, std::string>* result) {
  ActorContext actor_context(context, std::move(pipe));
  std::expected<void, std::string> outcome;
  try {
    outcome = body(actor_context);
  } catch (const std::exception& e) {
    spdlog::error("actor {}: body threw: {}", name, e.what());
    outcome = std::unexpected(std::string("uncaught exception: ") + e.what());
  } catch (...) {
    spdlog::error("actor {}: body threw a non-standard exception", name);
    outcome = std::unexpected(std::string("uncaught exception of unknown type"));
  }
  // A body that ends well without announcing readiness is ready by definition;
  // one that failed first must not, so Start sees the failure instead.
  if (outcome) actor_context.SignalReady();
  // Written before the last message, read by the parent after joining the thread.
  *result = outcome;
  const std::string last =
      outcome ? std::string(kDone) : std::string(kFailPrefix) + outcome.error();
  SendControl(actor_context.pipe(), last, zmq::send_flags::none);
}

}  // namespace

ActorContext::ActorContext(zmq::context_t& context, zmq::socket_t pipe)
    : context_(context), pipe_(std::move(pipe)) {}

void ActorContext::SignalReady() {
  if (ready_sent_) return;
  ready_sent_ = true;
  SendControl(pipe_, kReady, zmq::send_flags::none);
}

bool ActorContext::StopRequested() {
  if (stop_seen_) return true;
  try {
    zmq::message_t message;
    while (RetryInterrupted([&] { return pipe_.recv(message, zmq::recv_flags::dontwait); })) {
      if (message.to_string_view() == kStop) {
        stop_seen_ = true;
      } else if (message.to_string_view() == kDrain) {
        drain_seen_ = true;
      } else {
        spdlog::warn("actor pipe: ignoring unexpected control message ({} bytes)", message.size());
      }
    }
  } catch (const zmq::error_t& e) {
    // ETERM: the context is shutting down, so the body has to finish anyway.
    spdlog::warn("actor pipe: {}; treating it as a stop request", e.what());
    stop_seen_ = true;
  }
  return stop_seen_;
}

bool ActorContext::DrainRequested() {
  StopRequested();  // reads whatever the pipe holds
  return drain_seen_;
}

Actor::Actor(std::string name, zmq::socket_t pipe)
    : name_(std::move(name)), pipe_(std::move(pipe)) {}

std::expected<std::unique_ptr<Actor>, std::string> Actor::Start(zmq::context_t& context,
                                                                std::string name, Body body) {
  std::unique_ptr<Actor> actor;
  zmq::socket_t child;
  try {
    actor.reset(new Actor(std::move(name), zmq::socket_t(context, zmq::socket_type::pair)));
    actor->pipe_.set(zmq::sockopt::linger, 0);
    // The object's address is unique among live actors; a dead actor's endpoint is
    // unbound in the destructor, the attempt counter covers any leftover anyway.
    const auto address = reinterpret_cast<std::uintptr_t>(actor.get());
    for (int attempt = 0;; ++attempt) {
      std::string endpoint =
          fmt::format("inproc://actex-actor/{}/{:x}/{}", actor->name_, address, attempt);
      try {
        RetryInterrupted([&] { actor->pipe_.bind(endpoint); });
        actor->endpoint_ = std::move(endpoint);
        break;
      } catch (const zmq::error_t& e) {
        if (e.num() != EADDRINUSE || attempt >= 100) throw;
      }
    }
    child = zmq::socket_t(context, zmq::socket_type::pair);
    child.set(zmq::sockopt::linger, 0);
    RetryInterrupted([&] { child.connect(actor->endpoint_); });
  } catch (const zmq::error_t& e) {
    return std::unexpected(fmt::format("actor {}: cannot create its pipe: {}",
                                       actor ? actor->name_ : std::string("?"), e.what()));
  }

  // The child socket migrates to the new thread; creating the thread is the full
  // memory barrier ZeroMQ asks for when a socket changes threads.
  try {
    actor->thread_ = std::thread(RunBody, std::ref(context), std::move(child),
                                 std::cref(actor->name_), std::move(body), &actor->result_);
  } catch (const std::system_error& e) {
    actor->joined_ = true;  // there is no thread to wait for
    return std::unexpected(
        fmt::format("actor {}: cannot start its thread: {}", actor->name_, e.what()));
  }

  try {
    zmq::message_t message;
    while (true) {
      if (!RetryInterrupted([&] { return actor->pipe_.recv(message, zmq::recv_flags::none); })) {
        continue;
      }
      const std::string_view text = message.to_string_view();
      if (text == kReady) return actor;
      if (text == kDone || text.starts_with(kFailPrefix)) break;
      spdlog::warn("actor {}: unexpected message on the pipe before ready", actor->name_);
    }
  } catch (const zmq::error_t& e) {
    // Only ETERM ends a blocking receive here; the body sees it too and returns.
    actor->result_ = std::unexpected(std::string("pipe failed before ready: ") + e.what());
  }
  // The body ended before it was ready: report its result.
  auto result = actor->Join();
  if (result) return std::unexpected(actor->name_ + ": ended before it was ready");
  return std::unexpected(result.error());
}

void Actor::RequestStop() {
  if (joined_) return;
  // Never block: after the body ended nobody reads the pipe any more.
  SendControl(pipe_, kStop, zmq::send_flags::dontwait);
}

void Actor::RequestDrain() {
  if (joined_) return;
  SendControl(pipe_, kDrain, zmq::send_flags::dontwait);
}

std::expected<void, std::string> Actor::Join() {
  if (!joined_) {
    if (thread_.joinable()) thread_.join();
    joined_ = true;
  }
  if (result_) return {};
  return std::unexpected(name_ + ": " + result_.error());
}

Actor::~Actor() {
  if (!joined_) {
    RequestStop();
    if (thread_.joinable()) thread_.join();
    joined_ = true;
  }
  if (!endpoint_.empty()) {
    // Unbinding an inproc endpoint is synchronous (closing is not), so the name is
    // free again as soon as the destructor returns.
    try {
      pipe_.unbind(endpoint_);
    } catch (const zmq::error_t& e) {
      spdlog::warn("actor {}: unbinding {} failed: {}", name_, endpoint_, e.what());
    }
  }
}

}  // namespace actex
