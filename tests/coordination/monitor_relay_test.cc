// The coordinator's monitor relay: nodes' PUBs -> XSUB -> XPUB -> monitors' SUBs.

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordination/coordinator.h"
#include "tests/coordination/coordinator_test_util.h"
#include "transport/wire.h"

namespace actex {
namespace {

using coordinator_test::Collect;
using coordinator_test::FastOptions;
using coordinator_test::Monitor;
using coordinator_test::NodePublisher;
using coordinator_test::SubscribedMonitor;
using coordinator_test::WaitUntil;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

MonitorEventMessage Event(int host_id, int64_t docs_done) {
  MonitorEventMessage event;
  event.kind = "progress";
  event.host_id = host_id;
  event.docs_done = docs_done;
  return event;
}

// Publishes from both nodes until the monitor saw an event of each (the
// subscription travels SUB -> XPUB -> relay -> XSUB -> PUB asynchronously).
void PublishUntilSeen(zmq::socket_t (&publishers)[2], zmq::socket_t& monitor) {
  std::set<int> seen;
  EXPECT_TRUE(WaitUntil([&] {
    for (int host = 0; host < 2; ++host) {
      EXPECT_TRUE(Send(publishers[host], Event(host, -1)).has_value());
    }
    for (const auto& event : Collect(monitor, 20ms)) seen.insert(event.host_id);
    return seen.size() == 2;
  }));
}

TEST(MonitorRelay, MonitorReceivesTwoNodesEventsAndMonitorsMayComeAndGo) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();

  zmq::socket_t publishers[2] = {NodePublisher(context, options), NodePublisher(context, options)};
  zmq::socket_t first = Monitor(context, options);
  PublishUntilSeen(publishers, first);

  // A second monitor attaches mid-stream, then the first one leaves; publishers go
  // on without ever blocking, and what is published after that reaches the second.
  zmq::socket_t second = Monitor(context, options);
  PublishUntilSeen(publishers, second);
  Collect(first, 50ms);
  first.close();
  auto slowest = Clock::duration::zero();
  for (int64_t docs = 1; docs <= 200; ++docs) {
    for (int host = 0; host < 2; ++host) {
      const auto start = Clock::now();
      ASSERT_TRUE(Send(publishers[host], Event(host, docs)).has_value());
      slowest = std::max(slowest, Clock::now() - start);
    }
  }
  EXPECT_LT(slowest, 50ms);
  std::vector<int64_t> last_docs(2, 0);
  int received = 0;
  EXPECT_TRUE(WaitUntil([&] {
    for (const auto& event : Collect(second, 20ms)) {
      if (event.docs_done < 0) continue;  // from PublishUntilSeen
      // In order per publisher, none lost (the queues are far from full).
      EXPECT_EQ(event.docs_done, last_docs[event.host_id] + 1) << "host " << event.host_id;
      last_docs[event.host_id] = event.docs_done;
      ++received;
    }
    return received == 400;
  })) << received
      << " of 400 events";
  EXPECT_EQ(last_docs, (std::vector<int64_t>{200, 200}));
  EXPECT_GE(options.counters->monitor_events_relayed, 400u);
}

TEST(MonitorRelay, PublishersNeverBlockWithoutAnyMonitor) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(1);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  zmq::socket_t publisher = NodePublisher(context, options);
  const auto start = Clock::now();
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(Send(publisher, Event(0, i)).has_value());
  EXPECT_LT(Clock::now() - start, 5s);
}

// What a stranger sends to either monitor port never reaches a monitor (Collect
// fails on anything that is not a MonitorEvent) or a node: it is dropped and counted.
TEST(MonitorRelay, StrangersGarbageOnEitherPortIsDroppedAndCounted) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(1);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  zmq::socket_t node = NodePublisher(context, options);
  zmq::socket_t stranger = NodePublisher(context, options);
  zmq::socket_t monitor = Monitor(context, options);
  auto send_frames = [](zmq::socket_t& socket, const std::vector<std::string>& frames) {
    for (size_t i = 0; i < frames.size(); ++i) {
      socket.send(zmq::buffer(frames[i]),
                  i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
  };
  auto pack = [](const auto& value) {
    msgpack::sbuffer buffer;
    msgpack::pack(buffer, value);
    return std::string(buffer.data(), buffer.size());
  };
  const std::string envelope =
      pack(std::map<std::string, uint64_t>{{"t", 10}, {"v", kSchemaVersion}});
  const std::string body = pack(Event(0, 1));
  // Once the stranger's PUB has the monitor's subscription too, its garbage flows.
  std::set<int> seen;
  EXPECT_TRUE(WaitUntil([&] {
    EXPECT_TRUE(Send(node, Event(0, -1)).has_value());
    send_frames(stranger, {"probe"});
    for (const auto& event : Collect(monitor, 20ms)) seen.insert(event.host_id);
    return !seen.empty() && options.counters->dropped_monitor_messages >= 1;
  }));
  const uint64_t before = options.counters->dropped_monitor_messages;
  send_frames(stranger, {std::string("\x93\x01\x02", 3)});             // one random frame
  send_frames(stranger, {envelope, body, "extra"});                    // three frames
  send_frames(stranger, {envelope, body.substr(0, body.size() / 2)});  // truncated body
  send_frames(stranger,
              {pack(std::map<std::string, uint64_t>{{"t", 10}, {"v", kSchemaVersion + 1}}), body});
  send_frames(stranger, {pack(std::map<std::string, uint64_t>{{"t", 33}, {"v", kSchemaVersion}}),
                         pack(BarrierMessage{"done"})});  // another type
  send_frames(stranger, {envelope, pack(std::map<std::string, int>{{"kind", 1}})});
  // A stranger at the feed port sending what no subscriber sends.
  zmq::socket_t feed_stranger(context, zmq::socket_type::xsub);
  feed_stranger.set(zmq::sockopt::linger, 0);
  feed_stranger.connect("tcp://127.0.0.1:" + std::to_string(options.monitor_port));
  send_frames(feed_stranger, {"\x07 not a subscription"});
  send_frames(feed_stranger, {std::string("\x01", 1), "two frames"});
  EXPECT_TRUE(WaitUntil([&] { return options.counters->dropped_monitor_messages >= before + 8; }))
      << options.counters->dropped_monitor_messages - before << " of 8 dropped";

  // The node's events still pass, and nothing else does.
  std::vector<MonitorEventMessage> events;
  EXPECT_TRUE(WaitUntil([&] {
    EXPECT_TRUE(Send(node, Event(0, 42)).has_value());
    for (const auto& event : Collect(monitor, 20ms)) events.push_back(event);
    return !events.empty() && events.back().docs_done == 42;
  }));
}

// "lost" and "standby" are the coordinator's own words: from a publisher (a stranger
// on the collector port) they are dropped, and a node's events still pass.
TEST(MonitorRelay, ACoordinatorsKindOfEventFromAPublisherIsDropped) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(1);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  std::optional<zmq::socket_t> monitor = SubscribedMonitor(context, options);
  ASSERT_TRUE(monitor);
  zmq::socket_t stranger = NodePublisher(context, options);
  const uint64_t before = options.counters->dropped_monitor_messages;
  std::vector<MonitorEventMessage> events;
  EXPECT_TRUE(WaitUntil([&] {
    for (const char* kind : {kLostEventKind, kStandbyEventKind}) {
      MonitorEventMessage forged = Event(1, 0);
      forged.kind = kind;
      forged.message = "tcp://127.0.0.1:1";
      EXPECT_TRUE(Send(stranger, forged).has_value());
    }
    EXPECT_TRUE(Send(stranger, Event(0, 42)).has_value());
    for (const auto& event : Collect(*monitor, 20ms)) events.push_back(event);
    // A PUB drops what it sends before its connection is up, so the first forged
    // events may never reach the relay while the next good one does: wait for both.
    return !events.empty() && events.back().docs_done == 42 &&
           options.counters->dropped_monitor_messages >= before + 2;
  }));
  for (const MonitorEventMessage& event : events) EXPECT_EQ(event.kind, "progress");
}

}  // namespace
}  // namespace actex
