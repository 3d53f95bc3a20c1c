// ShardTimeline: a device shard's time split into waiting, forward and handing on,
// from its first message on.

#include "actors/shard_timeline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace actex {
namespace {

using std::chrono::milliseconds;

TEST(ShardTimeline, AShardThatComputedNothingSaysSo) {
  ShardTimeline timeline;
  EXPECT_EQ(timeline.Describe(), "no batch");
  timeline.MarkReceived();  // the end of stream alone
  EXPECT_EQ(timeline.batches(), 0);
  EXPECT_EQ(timeline.Describe(), "no batch");
}

TEST(ShardTimeline, TheForwardIsTimedFromItsBatchAndTheWaitBeforeTheFirstIsNotCounted) {
  ShardTimeline timeline;
  std::this_thread::sleep_for(milliseconds(200));  // loading: not the stream's time
  timeline.MarkReceived();
  std::this_thread::sleep_for(milliseconds(20));
  timeline.MarkForwardDone(300);
  timeline.MarkHandedOn();
  timeline.MarkReceived();
  std::this_thread::sleep_for(milliseconds(20));
  timeline.MarkForwardDone(200);
  EXPECT_EQ(timeline.batches(), 2);
  EXPECT_GE(timeline.forward_seconds(), 0.04);
  const std::string text = timeline.Describe();
  EXPECT_EQ(text.rfind("2 batches, 500 tokens in ", 0), 0u) << text;
  // The whole span starts at the first message, so the forward is most of it.
  const double whole = std::stod(text.substr(text.find(" in ") + 4));
  EXPECT_LT(whole, 0.1 + timeline.forward_seconds()) << text;
  EXPECT_NE(text.find("waiting for batches"), std::string::npos) << text;
}

}  // namespace
}  // namespace actex
