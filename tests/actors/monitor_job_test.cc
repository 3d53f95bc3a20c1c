// `actex monitor` on a leased job of real `actex node` processes, attached before the
// job starts: with shards so large that none closes before the end, what it is told
// while nothing is listed yet (documents and tokens computed, the job's total), and
// that the numbers add up at the end; with a host killed mid-run, that they still do;
// with host 0 killed, that it follows the job to the standby coordinator.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <msgpack.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actex_process.h"
#include "actors/cli/monitor_view.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The events `monitor --json` printed, in order.
std::vector<nlohmann::json> Events(const ActexProcess& monitor) {
  std::vector<nlohmann::json> events;
  std::istringstream lines(monitor.out());
  for (std::string line; std::getline(lines, line);) {
    auto event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_discarded()) events.push_back(std::move(event));
  }
  return events;
}

// A corpus of `documents` for a leased job, and `actex monitor --json
// --exit-when-finished` attached to the job before any of its nodes starts.
struct MonitoredJob {
  explicit MonitoredJob(int64_t documents)
      : corpus(dir.Write("corpus.jsonl", Corpus(documents, 48))),
        job(dir),
        monitor(dir.path() + "/monitor",
                {"monitor", "tcp://127.0.0.1:" + std::to_string(job.port() + 1), "--json",
                 "--exit-when-finished", "--timeout", "60"}) {}

  TempDir dir;
  const std::string corpus;
  ManualJob job;
  ActexProcess monitor;
};

TEST(MonitorOfALeasedJob, ShowsComputedDocumentsAndTheJobsTotalBeforeAnyShardCloses) {
  constexpr int64_t kDocuments = 6000;
  MonitoredJob watched(kDocuments);
  ActexProcess& monitor = watched.monitor;
  // One shard per host, listed at the end: until then a host lists nothing.
  auto one_shard = [](NodeOptions& node) { node.extract.shard_bytes = int64_t{1} << 30; };
  for (ActexProcess* node : watched.job.StartAll(2, watched.corpus, "2d", one_shard)) {
    EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  }
  ASSERT_EQ(monitor.Wait(seconds(20)), 0) << monitor.err();
  const std::vector<nlohmann::json> events = Events(monitor);

  // While nothing was listed, the hosts already told what they computed (at their first
  // documents) and the job's total (as soon as their readers could estimate it).
  bool computed_before_listed = false, total_before_listed = false;
  for (const nlohmann::json& event : events) {
    if (event["kind"] != "progress" || event["shards_written"] != 0) continue;
    EXPECT_EQ(event["docs_done"], 0) << event;
    EXPECT_EQ(event["docs_computed"] > 0, event["tokens_computed"] > 0) << event;
    computed_before_listed = computed_before_listed || event["docs_computed"] > 0;
    if (event["docs_total"] == -1) continue;
    EXPECT_TRUE(event["docs_total_of_job"].get<bool>()) << event;
    EXPECT_NEAR(event["docs_total"].get<double>(), kDocuments, kDocuments / 10) << event;
    total_before_listed = true;
  }
  EXPECT_TRUE(computed_before_listed) << monitor.out();
  EXPECT_TRUE(total_before_listed) << monitor.out();

  // At the end everything computed is listed, and the hosts' documents, computed or
  // rejected, are the corpus's; the reader that met its end knew it exactly.
  std::map<int, nlohmann::json> finished;
  for (const nlohmann::json& event : events) {
    if (event["kind"] == "finished") finished[event["host_id"].get<int>()] = event;
  }
  ASSERT_EQ(finished.size(), 2u) << monitor.out();
  int64_t through = 0;
  bool exact_total = false;
  for (const auto& [host, event] : finished) {
    EXPECT_EQ(event["docs_computed"], event["docs_done"]) << event;
    EXPECT_EQ(event["tokens_computed"], event["tokens_done"]) << event;
    EXPECT_EQ(event["docs_through_listed"],
              event["docs_done"].get<int64_t>() + event["rejected"].get<int64_t>())
        << "every chunk listed, its rejected documents too: " << event;
    EXPECT_EQ(event["shards_written"], 1) << event;
    through += event["docs_computed"].get<int64_t>() + event["rejected"].get<int64_t>();
    exact_total = exact_total ||
                  (event["docs_total"] == kDocuments && !event["docs_total_estimated"].get<bool>());
  }
  EXPECT_EQ(through, kDocuments);
  EXPECT_TRUE(exact_total) << monitor.out();
}

// A JSON line of `monitor --json` as the event it printed (the same field names).
MonitorEventMessage EventOf(const nlohmann::json& line) {
  const std::vector<uint8_t> packed = nlohmann::json::to_msgpack(line);
  const msgpack::object_handle handle =
      msgpack::unpack(reinterpret_cast<const char*>(packed.data()), packed.size());
  return handle.get().as<MonitorEventMessage>();
}

// A host killed mid-run computed documents it never listed, which the others compute
// again: the coordinator tells the monitor the host is lost, the monitor then counts
// it for its listed chunks only, and with --exit-when-finished it leaves once the
// others finished. The job's documents add up to the corpus's, not more.
TEST(MonitorOfALeasedJob, ALostHostIsCountedForItsListedChunksAndNotWaitedFor) {
  MonitoredJob watched(4800);
  ActexProcess& monitor = watched.monitor;
  // Shards of tens of documents, so host 1 holds many it computed but did not list.
  auto larger_shards = [](NodeOptions& node) { node.extract.shard_bytes = int64_t{2} << 20; };
  std::vector<ActexProcess*> nodes = watched.job.StartAll(3, watched.corpus, "2d", larger_shards);
  ASSERT_TRUE(WaitForFirstShard(watched.dir.path() + "/out/host_01", seconds(60)))
      << nodes[1]->err();
  std::this_thread::sleep_for(milliseconds(300));  // mid-run, past the first listing
  nodes[1]->Signal(SIGKILL);
  const int host0_status = nodes[0]->Wait(seconds(120));
  EXPECT_EQ(nodes[2]->Wait(seconds(120)), 0) << nodes[2]->err();
  const std::string host0_log = nodes[0]->err();
  if (host0_status != 0 &&
      host0_log.find("'s folder (it was lost while listing") != std::string::npos) {
    // Killed between saying it lists chunks and saying it listed them: the job ends
    // waiting for its folder (leased_job_test finishes such a job).
    std::printf("host 1 was killed while listing: the job did not finish\n");
    return;
  }
  ASSERT_EQ(host0_status, 0) << host0_log;
  ASSERT_EQ(monitor.Wait(seconds(20)), 0) << "it waited for the lost host\n" << monitor.err();

  MonitorView view;
  int lost_events = 0;
  for (const nlohmann::json& line : Events(monitor)) {
    if (line["kind"] == "lost") {
      ++lost_events;
      EXPECT_EQ(line["host_id"], 1) << line;
      EXPECT_NE(line["message"].get<std::string>().find("host 1 lost"), std::string::npos) << line;
    }
    view.Apply(EventOf(line));
  }
  EXPECT_EQ(lost_events, 1) << monitor.out();
  EXPECT_TRUE(view.AllFinished());
  const std::string table = view.RenderTable(0);
  EXPECT_NE(table.find("4,800 / 4,800 (100.0%)"), std::string::npos) << table;
  EXPECT_NE(table.find("2/3 finished, 1 lost"), std::string::npos) << table;
}

// A monitor attached to host 0 only: host 0 names the standby's feed, so when host 0
// is killed the monitor hears the job from the standby, which counts host 0 lost,
// and leaves once hosts 1-3 finished. Each event is counted once though both
// coordinators relayed it until then.
TEST(MonitorOfALeasedJob, FollowsTheJobToTheStandbyWhenHost0IsLost) {
  MonitoredJob watched(4800);
  ActexProcess& monitor = watched.monitor;
  std::vector<ActexProcess*> nodes = watched.job.StartAll(4, watched.corpus, "2d");
  ASSERT_TRUE(WaitForFirstShard(watched.dir.path() + "/out/host_00", seconds(60)))
      << nodes[0]->err();
  std::this_thread::sleep_for(milliseconds(100));  // past a listing
  nodes[0]->Signal(SIGKILL);
  const int host1_status = nodes[1]->Wait(seconds(120));
  for (int host : {2, 3}) EXPECT_EQ(nodes[host]->Wait(seconds(60)), 0) << nodes[host]->err();
  if (host1_status != 0 && nodes[1]->err().find("wait for host-0's folder") != std::string::npos) {
    // Killed between saying it lists chunks and saying it listed them: the job ends
    // waiting for its folder (standby_takeover_test finishes such a job).
    std::printf("host 0 was killed while listing: the job did not finish\n");
    return;
  }
  ASSERT_EQ(host1_status, 0) << nodes[1]->err();
  ASSERT_EQ(monitor.Wait(seconds(30)), 0) << "it did not follow the job\n" << monitor.err();

  MonitorView view;
  int standby_events = 0, lost_events = 0;
  std::set<std::string> lines;
  for (const nlohmann::json& line : Events(monitor)) {
    EXPECT_TRUE(lines.insert(line.dump()).second) << "printed twice: " << line;
    if (line["kind"] == "standby") {
      ++standby_events;
      EXPECT_EQ(line["host_id"], 1) << line;
    }
    if (line["kind"] == "lost") {
      ++lost_events;
      EXPECT_EQ(line["host_id"], 0) << line;
    }
    view.Apply(EventOf(line));
  }
  EXPECT_GE(standby_events, 1) << monitor.out();
  EXPECT_EQ(lost_events, 1) << monitor.out();
  EXPECT_TRUE(view.AllFinished());
  const std::string table = view.RenderTable(0);
  EXPECT_NE(table.find("4,800 / 4,800 (100.0%)"), std::string::npos) << table;
  EXPECT_NE(table.find("3/4 finished, 1 lost"), std::string::npos) << table;
}

}  // namespace
}  // namespace actex
