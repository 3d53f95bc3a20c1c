// MonitorFeed: the endpoints `actex monitor` listens at, and each event handed on once
// though two coordinators relay it (label process: connecting opens tcp sockets).
#include "actors/cli/monitor_feed.h"

#include <gtest/gtest.h>

#include <string>

namespace actex {
namespace {

MonitorEventMessage Progress(int32_t host, double at) {
  MonitorEventMessage event;
  event.kind = "progress";
  event.host_id = host;
  event.unix_seconds = at;
  event.docs_computed = 10;
  return event;
}

TEST(MonitorFeed, HandsOnEachEventOnceWhicheverRelayBroughtItFirst) {
  zmq::context_t context;
  MonitorFeed feed(context);
  EXPECT_TRUE(feed.FirstCopy(Progress(1, 100.5)));
  EXPECT_TRUE(feed.FirstCopy(Progress(2, 100.5))) << "another host";
  EXPECT_TRUE(feed.FirstCopy(Progress(1, 100.75))) << "the same host later";
  EXPECT_FALSE(feed.FirstCopy(Progress(1, 100.5))) << "the other relay's copy";
  EXPECT_FALSE(feed.FirstCopy(Progress(2, 100.5)));
  MonitorEventMessage more = Progress(1, 100.5);
  more.docs_computed = 11;
  EXPECT_TRUE(feed.FirstCopy(more)) << "any field differs";
}

TEST(MonitorFeed, ForgetsTheOldestBeyondWhatItRemembers) {
  zmq::context_t context;
  MonitorFeed feed(context);
  for (size_t i = 0; i <= MonitorFeed::kRemembered; ++i) {
    ASSERT_TRUE(feed.FirstCopy(Progress(0, static_cast<double>(i))));
  }
  EXPECT_TRUE(feed.FirstCopy(Progress(0, 0))) << "forgotten";
  EXPECT_FALSE(feed.FirstCopy(Progress(0, static_cast<double>(MonitorFeed::kRemembered))));
}

TEST(MonitorFeed, FollowsNewTcpEndpointsUpToItsLimit) {
  zmq::context_t context;
  MonitorFeed feed(context);
  ASSERT_TRUE(feed.Connect({"tcp://127.0.0.1:9001", "tcp://127.0.0.1:9002"}, ""));
  EXPECT_EQ(feed.named(), "tcp://127.0.0.1:9001 tcp://127.0.0.1:9002");
  auto same = feed.Follow("tcp://127.0.0.1:9001");
  ASSERT_TRUE(same) << same.error();
  EXPECT_FALSE(*same) << "connected already";
  for (const std::string bad : {"ipc:///tmp/feed", "tcp://127.0.0.1", "udp://1.2.3.4:5", ""}) {
    EXPECT_FALSE(feed.Follow(bad)) << bad;
  }
  for (size_t i = 0; i < MonitorFeed::kMaxFollowed; ++i) {
    auto followed = feed.Follow("tcp://127.0.0.1:" + std::to_string(9100 + i));
    ASSERT_TRUE(followed) << followed.error();
    EXPECT_TRUE(*followed);
  }
  auto beyond = feed.Follow("tcp://127.0.0.1:9200");
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().find("8 endpoints followed already"), std::string::npos)
      << beyond.error();
}

TEST(MonitorFeed, ChecksTheEndpointAUserGives) {
  EXPECT_EQ(MonitorFeed::CheckEndpoint("tcp://10.0.0.10:8477"), "");
  EXPECT_EQ(MonitorFeed::CheckEndpoint("ipc:///run/actex.sock"), "");
  EXPECT_NE(MonitorFeed::CheckEndpoint("10.0.0.10:8477").find("expected tcp://HOST:PORT"),
            std::string::npos);
  EXPECT_NE(MonitorFeed::CheckEndpoint("tcp://10.0.0.10:84x7").find("port is not a number"),
            std::string::npos);
}

}  // namespace
}  // namespace actex
