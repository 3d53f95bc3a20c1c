// `actex monitor` on a leased job of real `actex node` processes, attached before the
// job starts and with shards so large that none closes before the end: what it is told
// while nothing is listed yet (documents and tokens computed, the job's total), and
// that the numbers add up at the end.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "actex_process.h"
#include "manual_job.h"

namespace actex {
namespace {

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

TEST(MonitorOfALeasedJob, ShowsComputedDocumentsAndTheJobsTotalBeforeAnyShardCloses) {
  constexpr int64_t kDocuments = 6000;
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(kDocuments, 48));
  ManualJob job(dir);
  ActexProcess monitor(dir.path() + "/monitor",
                       {"monitor", "tcp://127.0.0.1:" + std::to_string(job.port() + 1), "--json",
                        "--exit-when-finished", "--timeout", "60"});
  // One shard per host, listed at the end: until then a host lists nothing.
  auto one_shard = [](NodeOptions& node) { node.extract.shard_bytes = int64_t{1} << 30; };
  for (ActexProcess* node : job.StartAll(2, corpus, "2d", one_shard)) {
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
    EXPECT_EQ(event["shards_written"], 1) << event;
    through += event["docs_computed"].get<int64_t>() + event["rejected"].get<int64_t>();
    exact_total = exact_total ||
                  (event["docs_total"] == kDocuments && !event["docs_total_estimated"].get<bool>());
  }
  EXPECT_EQ(through, kDocuments);
  EXPECT_TRUE(exact_total) << monitor.out();
}

}  // namespace
}  // namespace actex
