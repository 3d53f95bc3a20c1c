// MonitorView and lost hosts: what a host the job went on without counts for, and
// when a job with one is finished or incomplete.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "actors/cli/monitor_view.h"
#include "tests/actors/cli/monitor_events.h"

namespace actex {
namespace {

using monitor_view_test::Event;
using monitor_view_test::Row;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

// The coordinator's "lost" event for host `host` of a 3-host leased job.
MonitorEventMessage Lost(int32_t host, double at) {
  MonitorEventMessage lost;
  lost.kind = "lost";
  lost.host_id = host;
  lost.unix_seconds = at;
  lost.message = "host " + std::to_string(host) + " lost: no message for 10 s";
  lost.num_hosts = 3;
  return lost;
}

// A leased job of 3 hosts at 1020 s: hosts 0 and 1 running; host 2 listed chunks of
// 102 documents (100 in shards, 8,000 tokens, and 2 rejected), and computed 160 more
// into the shard it was filling, rejecting 1 more.
MonitorView ThreeLeasedHostsOneAboutToBeLost() {
  MonitorView view;
  for (int32_t host : {0, 1, 2}) {
    MonitorEventMessage event = Event("progress", host, 1020, 200, 1000);
    event.docs_total_of_job = true;
    event.num_hosts = 3;
    if (host == 2) {
      event.docs_done = 100;
      event.tokens_done = 8000;
      event.docs_through_listed = 102;
      event.docs_computed = 260;
      event.tokens_computed = 20800;
      event.rejected = 3;
    }
    view.Apply(event);
  }
  return view;
}

// What a lost host computed but did not list is redone by the hosts that take its
// chunks: counting it too would put the job past its total.
TEST(MonitorView, ALostHostCountsOnlyTheDocumentsOfTheChunksItListed) {
  MonitorView view = ThreeLeasedHostsOneAboutToBeLost();
  EXPECT_THAT(Row(view.RenderTable(1020), "total"), HasSubstr("663 / 1,000"));
  view.Apply(Lost(2, 1030));
  const std::string table = view.RenderTable(1030);
  const std::string host2 = Row(table, "2");
  EXPECT_THAT(host2, HasSubstr(" lost ")) << table;
  EXPECT_THAT(host2, HasSubstr(" 102 ")) << "its listed chunks' documents";
  EXPECT_THAT(host2, HasSubstr(" 8,000 ")) << "listed tokens only";
  EXPECT_THAT(host2, HasSubstr(" 2 ")) << "rejected in its listed chunks";
  EXPECT_THAT(host2, Not(HasSubstr(" 3 ")));
  EXPECT_THAT(host2, HasSubstr("lost: host 2 lost: no message"));
  EXPECT_THAT(Row(table, "total"), HasSubstr("502 / 1,000 (50.2%)")) << table;
  EXPECT_THAT(Row(table, "total"), HasSubstr("0/3 finished, 1 lost"));
}

// A lost host may still be publishing (cut off from the coordinator only): its events
// change nothing until its command runs again, which starts it afresh.
TEST(MonitorView, ALostHostsLaterEventsCountOnlyOnceItStartsAgain) {
  MonitorView view = ThreeLeasedHostsOneAboutToBeLost();
  view.Apply(Lost(2, 1030));
  MonitorEventMessage late = Event("progress", 2, 1031, 300, 1000);
  late.docs_total_of_job = true;
  view.Apply(late);
  EXPECT_THAT(Row(view.RenderTable(1031), "2"), HasSubstr(" 102 "));
  EXPECT_THAT(Row(view.RenderTable(1031), "2"), HasSubstr(" lost "));

  view.Apply(Event("started", 2, 1040, 100));
  view.Apply(late);
  EXPECT_THAT(Row(view.RenderTable(1041), "2"), HasSubstr(" 300 "));
  EXPECT_THAT(Row(view.RenderTable(1041), "total"), HasSubstr("0/3 finished"));
  EXPECT_THAT(Row(view.RenderTable(1041), "total"), Not(HasSubstr("lost")));
}

// The job goes on without a lost host (here one that failed): once the others
// finished, nothing is left to wait for, and the documents add up to the job's.
TEST(MonitorView, AJobWithALostHostIsFinishedWhenTheOthersAre) {
  MonitorView view = ThreeLeasedHostsOneAboutToBeLost();
  MonitorEventMessage error = Event("error", 2, 1025, 0);
  error.message = "disk full";
  view.Apply(error);
  view.Apply(Lost(2, 1030));
  EXPECT_FALSE(view.AllFinished());
  for (int32_t host : {0, 1}) {
    MonitorEventMessage finished = Event("finished", host, 1100, host == 0 ? 450 : 448, 1000);
    finished.docs_total_of_job = true;
    finished.num_hosts = 3;
    view.Apply(finished);
  }
  EXPECT_TRUE(view.AllFinished());
  const std::string total = Row(view.RenderTable(1100), "total");
  EXPECT_THAT(total, HasSubstr("1,000 / 1,000 (100.0%)"));
  EXPECT_THAT(total, HasSubstr("2/3 finished, 1 lost"));
  EXPECT_THAT(total, EndsWith(" done"));
}

// Hosts that own their shares: a lost host's share is left to its next run, so once
// the others finished the job is incomplete, not done.
TEST(MonitorView, AJobOfOwnSharesWithALostHostEndsIncomplete) {
  MonitorView view;
  for (int32_t host : {0, 1}) {
    MonitorEventMessage event = Event("progress", host, 1000, host == 0 ? 40 : 15, 100);
    event.num_hosts = 2;
    view.Apply(event);
  }
  MonitorEventMessage lost = Lost(1, 1030);
  lost.num_hosts = 2;
  view.Apply(lost);
  view.Apply(Event("finished", 0, 1100, 100, 100));
  EXPECT_TRUE(view.AllFinished());
  const std::string total = Row(view.RenderTable(1100), "total");
  EXPECT_THAT(total, HasSubstr("115 / 200 (57.5%)")) << "host 1's 15 listed of its 100";
  EXPECT_THAT(total, EndsWith(" incomplete"));
}

}  // namespace
}  // namespace actex
