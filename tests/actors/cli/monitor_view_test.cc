// MonitorView: what the live table and the JSON lines of `actex monitor` show for a
// given sequence of events.
#include "actors/cli/monitor_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/actors/cli/monitor_events.h"

namespace actex {
namespace {

using monitor_view_test::Event;
using monitor_view_test::Row;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

// Host 0 knows its total (100 docs) and does 2 docs/s; host 1 does not know its total.
MonitorView TwoHostsMidRun() {
  MonitorView view;
  view.Apply(Event("started", 0, 1000, 0, 100));
  view.Apply(Event("started", 1, 1000, 0));
  view.Apply(Event("progress", 0, 1010, 20, 100));
  MonitorEventMessage shard = Event("shard_written", 0, 1020, 40, 100);
  shard.shards_written = 1;
  shard.message = "shard_00000.safetensors";
  view.Apply(shard);
  MonitorEventMessage progress = Event("progress", 1, 1015, 15);
  progress.docs_computed = 13;  // and 2 rejected: 15 through
  progress.rejected = 2;
  view.Apply(progress);
  return view;
}

TEST(MonitorView, TableHasARowPerHostAndATotalRowWithEta) {
  const std::string table = TwoHostsMidRun().RenderTable(1022);
  const std::string host0 = Row(table, "0"), host1 = Row(table, "1"), total = Row(table, "total");
  ASSERT_FALSE(host0.empty()) << table;
  ASSERT_FALSE(host1.empty()) << table;
  ASSERT_FALSE(total.empty()) << table;
  EXPECT_THAT(host0, HasSubstr("shard_written"));
  EXPECT_THAT(host0, HasSubstr("40 / 100 (40.0%)"));
  EXPECT_THAT(host0, HasSubstr("4,000"));
  EXPECT_THAT(host0, HasSubstr("2s ago  shard_00000.safetensors"));
  EXPECT_THAT(host0, EndsWith(" 30s")) << "60 docs left at 2 docs/s";
  EXPECT_THAT(host1, HasSubstr("15 / ?"));
  EXPECT_THAT(host1, HasSubstr("1,500"));
  EXPECT_THAT(host1, HasSubstr("7s ago"));
  EXPECT_THAT(host1, EndsWith(" ?")) << "no total, no ETA";
  EXPECT_THAT(total, HasSubstr("0/2 finished"));
  EXPECT_THAT(total, HasSubstr("55 / ?"));
  EXPECT_THAT(total, HasSubstr("5,500"));
  EXPECT_THAT(total, HasSubstr(" 300 ")) << "tokens/s of both hosts";
  EXPECT_THAT(total, EndsWith(" ?")) << "one host's ETA is unknown";
  EXPECT_THAT(table, Not(HasSubstr("skipped")));
}

TEST(MonitorView, JobEtaIsTheSlowestHostsOnceEveryTotalIsKnown) {
  MonitorView view = TwoHostsMidRun();
  // Host 1 learns its total, 30 docs, and did 1 doc/s since it started.
  view.Apply(Event("progress", 1, 1016, 16, 30));
  const std::string table = view.RenderTable(1022);
  EXPECT_THAT(Row(table, "1"), EndsWith(" 14s"));
  EXPECT_THAT(Row(table, "total"), HasSubstr("56 / 130 (43.1%)"));
  EXPECT_THAT(Row(table, "total"), EndsWith(" 30s")) << table;
}

TEST(MonitorView, EtaFollowsTheRecentRateNotTheAverage) {
  MonitorView view;
  view.Apply(Event("started", 0, 0, 0, 10000));
  view.Apply(Event("progress", 0, 100, 1000, 10000));  // 10 docs/s for 100 s
  for (int second = 101; second <= 140; ++second) {    // then 100 docs/s
    view.Apply(Event("progress", 0, second, 1000 + 100 * (second - 100), 10000));
  }
  // 5000 docs left at 100 docs/s: 50 s (the whole-run average would say 2m20s).
  EXPECT_THAT(Row(view.RenderTable(140), "0"), EndsWith(" 50s"));
}

TEST(MonitorView, FinishedHostsShowDoneAndAllFinishedNeedsEveryHost) {
  MonitorView view = TwoHostsMidRun();
  EXPECT_FALSE(view.AllFinished());
  view.Apply(Event("finished", 0, 1050, 100, 100));
  EXPECT_FALSE(view.AllFinished());
  EXPECT_THAT(Row(view.RenderTable(1050), "0"), EndsWith(" done"));
  view.Apply(Event("finished", 1, 1051, 30, 30));
  EXPECT_TRUE(view.AllFinished());
  const std::string total = Row(view.RenderTable(1052), "total");
  EXPECT_THAT(total, HasSubstr("2/2 finished"));
  EXPECT_THAT(total, HasSubstr("130 / 130 (100.0%)"));
  EXPECT_THAT(total, EndsWith(" done"));
  view.Apply(Event("started", 1, 1060, 0));  // host 1 runs again
  EXPECT_FALSE(view.AllFinished());
}

TEST(MonitorView, AFinishedHostDoesNotFinishAJobWhoseOtherHostWasNotSeenYet) {
  MonitorView view;
  MonitorEventMessage fast = Event("started", 0, 1000, 0, 10);
  fast.num_hosts = 2;
  view.Apply(fast);
  fast.kind = "finished";
  fast.docs_done = 10;
  view.Apply(fast);
  EXPECT_FALSE(view.AllFinished()) << "host 1 of 2 has sent nothing yet";
  MonitorEventMessage slow = Event("finished", 1, 1100, 5, 5);
  slow.num_hosts = 2;
  view.Apply(slow);
  EXPECT_TRUE(view.AllFinished());
}

TEST(MonitorView, NoHostMeansNotFinished) { EXPECT_FALSE(MonitorView().AllFinished()); }

TEST(MonitorView, EventWithoutCountersKeepsProgressAndKnownTotal) {
  MonitorView view = TwoHostsMidRun();
  MonitorEventMessage error = Event("error", 0, 1021, 0);
  error.tokens_done = 0;
  error.message = "disk full";
  view.Apply(error);
  EXPECT_EQ(view.errors(), 1);
  const std::string host0 = Row(view.RenderTable(1022), "0");
  EXPECT_THAT(host0, HasSubstr("40 / 100 (40.0%)"));
  EXPECT_THAT(host0, HasSubstr("4,000"));
  EXPECT_THAT(host0, HasSubstr("error: disk full"));
  EXPECT_THAT(host0, EndsWith(" failed"));
}

TEST(MonitorView, WireTextCannotSendTerminalEscapes) {
  MonitorView view;
  MonitorEventMessage event = Event("warn\x1b[31ming", 3, 10, 1);
  event.message = "\x1b[2J\x9b\xc2\x9bhi\n";
  view.Apply(event);
  view.RecordSkipped("bad \x1b[Hreason");
  const std::string table = view.RenderTable(10);
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_EQ(table.find("\xc2\x9b"), std::string::npos);
  EXPECT_THAT(table, HasSubstr("skipped 1 message(s)"));
}

TEST(MonitorView, HostsBeyondTheLimitAreCountedNotTracked) {
  MonitorView view;
  for (int32_t host = 0; host <= static_cast<int32_t>(MonitorView::kMaxHosts); ++host) {
    view.Apply(Event("progress", host, 1, 1));
  }
  EXPECT_EQ(view.hosts(), MonitorView::kMaxHosts);
  EXPECT_EQ(view.ignored_events(), 1);
}

TEST(MonitorView, JsonLineHoldsEveryFieldInSchemaOrder) {
  MonitorEventMessage event = Event("shard_written", 1, 1700000000.5, 12);
  event.tokens_per_second = 1234.5;
  event.shards_written = 3;
  event.rejected = 4;
  event.message = "shard_00002.safetensors";
  const std::string line = MonitorView::JsonLine(event);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto json = nlohmann::ordered_json::parse(line);
  const nlohmann::ordered_json expected = {{"kind", "shard_written"},
                                           {"host_id", 1},
                                           {"unix_seconds", 1700000000.5},
                                           {"docs_done", 12},
                                           {"docs_total", -1},
                                           {"docs_total_estimated", false},
                                           {"docs_total_of_job", false},
                                           {"tokens_done", 1200},
                                           {"docs_through_listed", 12},
                                           {"docs_computed", 12},
                                           {"tokens_computed", 1200},
                                           {"tokens_per_second", 1234.5},
                                           {"shards_written", 3},
                                           {"rejected", 4},
                                           {"message", "shard_00002.safetensors"},
                                           {"num_hosts", 1}};
  EXPECT_EQ(json, expected);
}

// A JSONL corpus: the writer estimates the total from the bytes read; the table
// marks it with ~, gives an ETA from it, and drops the ~ once it is exact.
TEST(MonitorView, EstimatedTotalIsMarkedAndStillGivesAnEta) {
  MonitorView view;
  MonitorEventMessage started = Event("started", 0, 1000, 0);
  view.Apply(started);
  MonitorEventMessage progress = Event("progress", 0, 1010, 20, 1000);
  progress.docs_total_estimated = true;
  view.Apply(progress);
  progress = Event("progress", 0, 1020, 40, 1010);
  progress.docs_total_estimated = true;
  view.Apply(progress);
  std::string table = view.RenderTable(1020);
  EXPECT_THAT(Row(table, "0"), HasSubstr("40 / ~1,010 (4.0%)"));
  EXPECT_THAT(Row(table, "0"), EndsWith(" 8m05s")) << "970 docs left at 2 docs/s\n" << table;
  EXPECT_THAT(Row(table, "total"), HasSubstr("40 / ~1,010"));
  MonitorEventMessage exact = Event("progress", 0, 1030, 60, 1004);
  view.Apply(exact);
  table = view.RenderTable(1030);
  EXPECT_THAT(Row(table, "0"), HasSubstr("60 / 1,004 (6.0%)"));
  EXPECT_THAT(Row(table, "total"), HasSubstr("60 / 1,004"));
}

// A shard of 1 GB closes after an hour of a slow model's work: until then nothing is
// listed, and the table shows what was computed.
TEST(MonitorView, DocumentsComputedShowBeforeAnyShardIsListed) {
  MonitorView view;
  MonitorEventMessage progress = Event("progress", 0, 1000, 0, 1000);
  progress.docs_computed = 300;
  progress.tokens_computed = 12345;
  progress.rejected = 5;
  view.Apply(progress);
  const std::string host0 = Row(view.RenderTable(1000), "0");
  EXPECT_THAT(host0, HasSubstr("305 / 1,000 (30.5%)")) << "computed or rejected";
  EXPECT_THAT(host0, HasSubstr("12,345"));
}

// A leased job: each host takes chunks as they come, so its events carry the job's
// total. Host rows show what each did, the total row the job's documents and an ETA at
// the hosts' summed docs/s; an exact total (one reader met the corpus's end) wins.
MonitorView LeasedJobMidRun() {
  MonitorView view;
  for (int32_t host : {0, 1}) {
    for (double at : {1000.0, 1010.0}) {
      const auto docs = static_cast<int64_t>(at - 1000) * (host + 1);
      MonitorEventMessage event = Event("progress", host, at, docs, 990);
      event.docs_total_of_job = true;
      event.docs_total_estimated = true;
      event.num_hosts = 2;
      view.Apply(event);
    }
  }
  return view;  // host 0 at 1 doc/s (10 docs), host 1 at 2 docs/s (20 docs)
}

TEST(MonitorView, LeasedJobShowsTheJobsTotalAndAnEtaAtTheSummedRate) {
  MonitorView view = LeasedJobMidRun();
  std::string table = view.RenderTable(1010);
  EXPECT_THAT(Row(table, "0"), HasSubstr(" 10 ")) << table;
  EXPECT_THAT(Row(table, "0"), Not(HasSubstr("/"))) << "a host's share is not known";
  EXPECT_THAT(Row(table, "0"), EndsWith(" -")) << "its end is the job's";
  EXPECT_THAT(Row(table, "total"), HasSubstr("30 / ~990 (3.0%)")) << "not 2 x 990";
  EXPECT_THAT(Row(table, "total"), EndsWith(" 5m20s")) << "960 docs at 3 docs/s";
  EXPECT_THAT(table, HasSubstr("of the job's total ~990, estimated from the JSONL bytes read"));

  MonitorEventMessage exact = Event("progress", 1, 1011, 22, 1000);
  exact.docs_total_of_job = true;
  view.Apply(exact);
  MonitorEventMessage later_estimate = Event("progress", 0, 1012, 12, 995);
  later_estimate.docs_total_of_job = true;
  later_estimate.docs_total_estimated = true;
  view.Apply(later_estimate);
  table = view.RenderTable(1012);
  EXPECT_THAT(Row(table, "total"), HasSubstr("34 / 1,000 (3.4%)")) << table;
  EXPECT_THAT(table, HasSubstr("of the job's total 1,000, exact"));
}

TEST(MonitorView, ALeasedHostThatWritesNothingNamesNoTotalAndLeavesTheEtaAlone) {
  MonitorView view = LeasedJobMidRun();
  view.Apply(Event("started", 2, 1005, 0));  // it only follows host 0's grants (1d)
  const std::string table = view.RenderTable(1010);
  EXPECT_THAT(Row(table, "2"), Not(HasSubstr("?"))) << table;
  EXPECT_THAT(Row(table, "2"), EndsWith(" -"));
  EXPECT_THAT(Row(table, "total"), EndsWith(" 5m20s"));
}

TEST(MonitorView, LeasedJobEndsWithEveryDocumentDone) {
  MonitorView view = LeasedJobMidRun();
  for (int32_t host : {0, 1}) {
    MonitorEventMessage finished = Event("finished", host, 1500, host == 0 ? 400 : 600, 1000);
    finished.docs_computed -= 5;  // 5 rejected each
    finished.rejected = 5;
    finished.docs_total_of_job = true;
    finished.num_hosts = 2;
    view.Apply(finished);
  }
  EXPECT_TRUE(view.AllFinished());
  const std::string total = Row(view.RenderTable(1500), "total");
  EXPECT_THAT(total, HasSubstr("1,000 / 1,000 (100.0%)")) << "computed or rejected";
  EXPECT_THAT(total, EndsWith(" done"));
}

// Host 0's "standby" event is about the coordinators: no host row, nothing waited
// for; the table says where the standby's feed is.
TEST(MonitorView, TheStandbysFeedIsNoHost) {
  MonitorView view;
  view.Apply(Event("finished", 0, 1000, 100, 100));
  MonitorEventMessage standby = Event(kStandbyEventKind, 1, 1001, 0);
  standby.num_hosts = 1;
  standby.message = "tcp://10.0.0.11:9001";
  view.Apply(standby);
  EXPECT_EQ(view.hosts(), 1u);
  EXPECT_TRUE(view.AllFinished());
  const std::string table = view.RenderTable(1001);
  EXPECT_EQ(Row(table, "1"), "");
  EXPECT_THAT(table, HasSubstr("the standby coordinator's feed (followed if host 0 is lost): "
                               "tcp://10.0.0.11:9001\n"));
}

TEST(MonitorView, JsonLineOfTextThatIsNotUtf8IsStillJson) {
  MonitorEventMessage event = Event("warning", 0, 1, 0);
  event.message = "bad \xff\xfe bytes";
  const auto json = nlohmann::json::parse(MonitorView::JsonLine(event), nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_THAT(json["message"].get<std::string>(), HasSubstr("bytes"));
}

}  // namespace
}  // namespace actex
