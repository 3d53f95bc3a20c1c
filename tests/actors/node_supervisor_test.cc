// The node's supervisor against actors that only say how they were asked to end: what
// a failure and what each kind of stop signal ask of each actor.
#include "actors/node_supervisor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "actors/actor_io.h"

namespace actex {
namespace {

// How an actor that waits for nothing but its pipe was asked to end.
enum class Heard { kNothing, kStop, kDrain };

// An actor that waits until it is asked to stop or to drain, and records which.
std::expected<std::unique_ptr<Actor>, std::string> Listener(zmq::context_t& context,
                                                            const std::string& name,
                                                            std::atomic<Heard>* heard) {
  return Actor::Start(context, name, [heard](ActorContext& actor) {
    actor.SignalReady();
    auto woken = WaitForAnyUnlessStopped(actor, {}, /*wake_on_drain=*/true);
    heard->store(woken.error().kind == ActorHalt::Kind::kDrainRequested ? Heard::kDrain
                                                                        : Heard::kStop);
    return std::expected<void, std::string>();
  });
}

class NodeSupervisorTest : public testing::Test {
 protected:
  // A writer, a loader and a tokenizer that only listen, and a supervisor of them.
  void Start(NodeSupervisor::Options options) {
    supervisor_ = std::make_unique<NodeSupervisor>(options);
    using On = NodeSupervisor::OnStopSignal;
    ASSERT_TRUE(supervisor_->Add(Listener(context_, "writer", &writer_), On::kListWhatIsWhole));
    ASSERT_TRUE(supervisor_->Add(Listener(context_, "loader", &loader_), On::kStop));
    ASSERT_TRUE(supervisor_->Add(Listener(context_, "tokenizer", &tokenizer_), On::kDrain));
  }

  zmq::context_t context_;
  std::atomic<Heard> writer_{Heard::kNothing}, loader_{Heard::kNothing},
      tokenizer_{Heard::kNothing};
  std::unique_ptr<NodeSupervisor> supervisor_;
};

TEST_F(NodeSupervisorTest, AFailureStopsEveryActorButHasTheWriterListWhatIsWhole) {
  Start({});
  ASSERT_TRUE(supervisor_->Add(Actor::Start(context_, "device shard 0", [](ActorContext& actor) {
    actor.SignalReady();
    return std::expected<void, std::string>(std::unexpected("ring 'replica-0': a peer is gone"));
  })));
  auto ran = supervisor_->Run();
  ASSERT_FALSE(ran);
  EXPECT_NE(ran.error().find("a peer is gone"), std::string::npos) << ran.error();
  EXPECT_EQ(writer_, Heard::kDrain);
  EXPECT_EQ(loader_, Heard::kStop);
  EXPECT_EQ(tokenizer_, Heard::kStop);
}

TEST_F(NodeSupervisorTest, AFirstSignalDrainsAndAnOverdueDrainStopsWhereItIs) {
  StopSignals signals;
  signals.count = 1;
  signals.last = 15;
  Start({.stop_signals = &signals, .drain_timeout = std::chrono::milliseconds(0)});
  ASSERT_TRUE(supervisor_->Run());
  EXPECT_EQ(supervisor_->ending(), RunEnding::kDrainTimedOut);
  EXPECT_EQ(writer_, Heard::kDrain);
  EXPECT_EQ(loader_, Heard::kStop);
  EXPECT_EQ(tokenizer_, Heard::kStop);
}

TEST_F(NodeSupervisorTest, ASecondSignalStopsEveryActorAtOnce) {
  StopSignals signals;
  signals.count = 2;
  signals.last = 2;
  Start({.stop_signals = &signals});
  ASSERT_TRUE(supervisor_->Run());
  EXPECT_EQ(supervisor_->ending(), RunEnding::kStoppedAtOnce);
  EXPECT_EQ(writer_, Heard::kStop);
  EXPECT_EQ(loader_, Heard::kStop);
  EXPECT_EQ(tokenizer_, Heard::kStop);
}

}  // namespace
}  // namespace actex
