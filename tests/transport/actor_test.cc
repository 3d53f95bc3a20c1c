#include "transport/actor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace actex {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Waits up to `timeout` for the parent's end of the pipe to become readable and
// returns the single frame found there ("" when nothing came).
std::string ReadPipe(Actor& actor, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{actor.pipe().handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) == 0) return "";
  zmq::message_t message;
  if (!actor.pipe().recv(message, zmq::recv_flags::dontwait)) return "";
  return message.to_string();
}

// A body that becomes ready and then waits for "$STOP" on its pipe.
Actor::Body WaitForStop(std::atomic<bool>* exited) {
  return [exited](ActorContext& context) -> std::expected<void, std::string> {
    context.SignalReady();
    zmq::pollitem_t item{context.pipe().handle(), 0, ZMQ_POLLIN, 0};
    while (!context.StopRequested()) zmq::poll(&item, 1, std::chrono::milliseconds(1000));
    exited->store(true);
    return {};
  };
}

TEST(Actor, StartReturnsOnlyAfterTheBodySignalsReady) {
  zmq::context_t context;
  std::atomic<bool> bound{false};
  std::atomic<bool> exited{false};
  auto actor = Actor::Start(context, "binder", [&](ActorContext& actor_context) {
    zmq::socket_t socket(actor_context.context(), zmq::socket_type::pull);
    socket.set(zmq::sockopt::linger, 0);
    // Slow setup: Start must still wait for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    socket.bind("inproc://actor-test/binder");
    bound = true;
    return WaitForStop(&exited)(actor_context);
  });
  ASSERT_TRUE(actor.has_value()) << actor.error();
  EXPECT_TRUE(bound.load());
  EXPECT_EQ((*actor)->name(), "binder");
  (*actor)->RequestStop();
  EXPECT_TRUE((*actor)->Join().has_value());
  EXPECT_TRUE(exited.load());
}

TEST(Actor, StopRequestEndsTheBodyAndThePipeCarriesDone) {
  zmq::context_t context;
  std::atomic<bool> exited{false};
  auto actor = Actor::Start(context, "stoppable", WaitForStop(&exited));
  ASSERT_TRUE(actor.has_value()) << actor.error();
  EXPECT_EQ(ReadPipe(**actor, std::chrono::milliseconds(50)), "");  // still running
  (*actor)->RequestStop();
  EXPECT_EQ(ReadPipe(**actor, std::chrono::milliseconds(5000)), "$DONE");
  EXPECT_TRUE((*actor)->Join().has_value());
  EXPECT_TRUE(exited.load());
}

TEST(Actor, FailureBeforeReadyIsReturnedByStart) {
  zmq::context_t context;
  auto actor =
      Actor::Start(context, "loader", [](ActorContext&) -> std::expected<void, std::string> {
        return std::unexpected("cannot open corpus.jsonl: No such file or directory");
      });
  ASSERT_FALSE(actor.has_value());
  EXPECT_EQ(actor.error(), "loader: cannot open corpus.jsonl: No such file or directory");
}

TEST(Actor, FailureAfterReadyIsReportedOnThePipeAndByJoin) {
  zmq::context_t context;
  auto actor = Actor::Start(context, "writer",
                            [](ActorContext& actor_context) -> std::expected<void, std::string> {
                              actor_context.SignalReady();
                              return std::unexpected("disk full");
                            });
  ASSERT_TRUE(actor.has_value()) << actor.error();
  EXPECT_EQ(ReadPipe(**actor, std::chrono::milliseconds(5000)), "$FAIL disk full");
  auto joined = (*actor)->Join();
  ASSERT_FALSE(joined.has_value());
  EXPECT_EQ(joined.error(), "writer: disk full");
  // Join may be asked again and gives the same answer.
  EXPECT_EQ((*actor)->Join().error(), "writer: disk full");
}

TEST(Actor, ExceptionThrownAfterReadyBecomesAFailure) {
  zmq::context_t context;
  auto actor = Actor::Start(context, "thrower",
                            [](ActorContext& actor_context) -> std::expected<void, std::string> {
                              actor_context.SignalReady();
                              throw std::runtime_error("tensor shape mismatch");
                            });
  ASSERT_TRUE(actor.has_value()) << actor.error();
  EXPECT_THAT(ReadPipe(**actor, std::chrono::milliseconds(5000)),
              StartsWith("$FAIL uncaught exception: tensor shape mismatch"));
  auto joined = (*actor)->Join();
  ASSERT_FALSE(joined.has_value());
  EXPECT_THAT(joined.error(), StartsWith("thrower: "));
  EXPECT_THAT(joined.error(), HasSubstr("tensor shape mismatch"));
}

TEST(Actor, ZmqErrorThrownBeforeReadyIsReturnedByStart) {
  zmq::context_t context;
  auto actor = Actor::Start(context, "bad-endpoint",
                            [](ActorContext& actor_context) -> std::expected<void, std::string> {
                              zmq::socket_t socket(actor_context.context(), zmq::socket_type::pull);
                              socket.set(zmq::sockopt::linger, 0);
                              socket.bind("nonsense://nowhere");  // throws zmq::error_t
                              actor_context.SignalReady();
                              return {};
                            });
  ASSERT_FALSE(actor.has_value());
  EXPECT_THAT(actor.error(), StartsWith("bad-endpoint: uncaught exception: "));
  EXPECT_THAT(actor.error(), HasSubstr("not supported"));
}

TEST(Actor, BodyThatEndsWithoutSignallingReadyStillStartsAndSucceeds) {
  zmq::context_t context;
  auto actor = Actor::Start(context, "quick",
                            [](ActorContext&) -> std::expected<void, std::string> { return {}; });
  ASSERT_TRUE(actor.has_value()) << actor.error();
  EXPECT_EQ(ReadPipe(**actor, std::chrono::milliseconds(5000)), "$DONE");
  EXPECT_TRUE((*actor)->Join().has_value());
}

TEST(Actor, DestructorStopsAndJoinsARunningActor) {
  zmq::context_t context;
  std::atomic<bool> exited{false};
  {
    auto actor = Actor::Start(context, "forgotten", WaitForStop(&exited));
    ASSERT_TRUE(actor.has_value()) << actor.error();
  }
  EXPECT_TRUE(exited.load());
}

TEST(Actor, ActorsWithTheSameNameHaveTheirOwnPipes) {
  zmq::context_t context;
  std::atomic<bool> first_exited{false};
  std::atomic<bool> second_exited{false};
  auto first = Actor::Start(context, "twin", WaitForStop(&first_exited));
  auto second = Actor::Start(context, "twin", WaitForStop(&second_exited));
  ASSERT_TRUE(first.has_value()) << first.error();
  ASSERT_TRUE(second.has_value()) << second.error();
  (*second)->RequestStop();
  EXPECT_EQ(ReadPipe(**second, std::chrono::milliseconds(5000)), "$DONE");
  EXPECT_EQ(ReadPipe(**first, std::chrono::milliseconds(50)), "");
  EXPECT_FALSE(first_exited.load());
  (*first)->RequestStop();
  EXPECT_TRUE((*first)->Join().has_value());
  EXPECT_TRUE((*second)->Join().has_value());
}

TEST(Actor, ManyActorsStartAndStopInOneContext) {
  zmq::context_t context;
  // Sequential lives reuse addresses; each must still find a free pipe endpoint.
  for (int i = 0; i < 50; ++i) {
    std::atomic<bool> exited{false};
    auto actor = Actor::Start(context, "cycled", WaitForStop(&exited));
    ASSERT_TRUE(actor.has_value()) << actor.error();
    (*actor)->RequestStop();
    ASSERT_TRUE((*actor)->Join().has_value());
  }
}

}  // namespace
}  // namespace actex
