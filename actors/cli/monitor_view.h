#ifndef ACTEX_ACTORS_CLI_MONITOR_VIEW_H_
#define ACTEX_ACTORS_CLI_MONITOR_VIEW_H_

// What `actex monitor` knows about a running job, built from the MonitorEventMessages
// the nodes publish, and the two ways it shows it: a table redrawn on a terminal, and
// one JSON line per event for scripts. It holds no socket and reads no clock: callers
// pass the times in, so the output is a pure function of what was applied.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>

#include "transport/schema.h"

namespace actex {

class MonitorView {
 public:
  // Distinct host ids tracked at most: a garbled or hostile stream must not grow the
  // table without bound. Events of further hosts are counted in ignored_events().
  static constexpr size_t kMaxHosts = 1024;
  // The docs/s behind a host's ETA is measured over its events of this many seconds
  // (by the host's clock), so the estimate follows the recent speed, not the average.
  static constexpr double kRateWindowSeconds = 30;

  // Records one event. Counters (docs, tokens, shards, rejected) never go down within
  // one run of a host, so an event sent with partial counters (an early error, say)
  // cannot erase progress; a "started" event begins a new run and resets them. A
  // docs_total of -1 leaves a known total in place. The one exception is the
  // coordinator's "lost" event for a host the job went on without: that host then
  // counts only what its metadata.json listed (see Lose). Host 0's "standby" event
  // names no host's run: the table shows where the standby's feed is.
  // "Last event ... ago" is measured from `received_unix_seconds`, the monitor's own
  // clock when the event arrived (the hosts' clocks may disagree with it); the
  // one-argument form uses the event's unix_seconds instead.
  void Apply(const MonitorEventMessage& event, double received_unix_seconds);
  void Apply(const MonitorEventMessage& event);

  // Counts a message that was not a valid monitor event; the table shows the count and
  // the last `reason`.
  void RecordSkipped(std::string reason);

  // The table for a terminal: a header, one row per host in host id order, a total row,
  // and a line on skipped messages if there were any. Every line ends with '\n'; text
  // from the wire is stripped of control characters. `now_unix_seconds` is the
  // monitor's clock, for the "ago" column.
  std::string RenderTable(double now_unix_seconds) const;

  // Every field of `event` as one JSON object on one line (no newline), fields in
  // schema order. Bytes that are not UTF-8 are replaced, so this never fails.
  static std::string JsonLine(const MonitorEventMessage& event);

  // True once every host of the job (the largest num_hosts any event named) was seen
  // and each sent "finished" after its last "started", or was lost since (nothing
  // more comes from it unless its command runs again).
  bool AllFinished() const;
  size_t hosts() const { return hosts_.size(); }
  int64_t events() const { return events_; }
  int64_t errors() const { return errors_; }
  int64_t skipped() const { return skipped_; }
  int64_t ignored_events() const { return ignored_events_; }
  const std::string& last_skip_reason() const { return last_skip_reason_; }

 private:
  struct HostState {
    std::string state;  // kind of the last event
    bool finished = false;
    bool failed = false;
    bool lost = false;         // the coordinator went on without it: it answers for what it listed
    int64_t docs_through = 0;  // computed (listed or not) or rejected
    int64_t docs_total = -1;
    bool docs_total_estimated = false;  // from the JSONL bytes read so far: shown as ~N
    bool docs_total_of_job = false;     // a leased job's total, not this host's share
    int64_t docs_listed = 0;            // docs_done: in shards its metadata.json lists
    int64_t docs_through_listed = 0;    // of the chunks it lists: those and rejected ones
    int64_t tokens_listed = 0;
    int64_t tokens_computed = 0;
    double tokens_per_second = 0;
    int64_t shards_written = 0;
    int64_t rejected = 0;
    double last_received = 0;
    std::string note;  // the last non-empty message, with its kind when it is not routine
    // (host clock, docs_through) of recent events, oldest first, for the docs/s.
    std::deque<std::pair<double, int64_t>> docs_samples;
  };

  // What the job's total row shows of its documents.
  struct JobDocs {
    int64_t through = 0;
    int64_t total = -1;  // -1: unknown
    bool estimated = false;
    bool of_job = false;  // a total the hosts reported for the whole (leased) job
  };

  // The coordinator's "lost" event: what the host computed (or rejected) in chunks it
  // did not list is redone by others (a leased job) or by its next run, so from now on
  // it counts only the documents of its listed chunks, and its later events change
  // nothing until it starts again.
  static void Lose(HostState& host, const std::string& reason);
  // The host's recent docs/s; negative when unknown.
  static double DocsPerSecond(const HostState& host);
  // Seconds until the host is done at its recent docs/s; negative when unknown.
  static double EtaSeconds(const HostState& host);
  // The job's documents through and its total: the hosts' totals summed, or the job's
  // total they report (exact when one host knows it, else the latest estimate).
  JobDocs SumJobDocs() const;
  // The line under the table on what the docs column counts and where its total
  // comes from (exact, or estimated: shown as ~N).
  static std::string DocsLegend(const JobDocs& job);
  // Seconds until the job is done; negative when unknown. With the job's total, its
  // remaining documents at the running hosts' summed docs/s; else the slowest host's.
  double JobEtaSeconds(const JobDocs& docs) const;

  std::map<int32_t, HostState> hosts_;
  int32_t expected_hosts_ = 1;
  int64_t events_ = 0;
  int64_t errors_ = 0;
  int64_t skipped_ = 0;
  int64_t ignored_events_ = 0;
  std::string last_skip_reason_;
  std::string standby_feed_;  // the last "standby" event's endpoint
};

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_MONITOR_VIEW_H_
