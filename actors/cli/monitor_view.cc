#include "actors/cli/monitor_view.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <msgpack.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "actors/cli/terminal_text.h"

namespace actex {
namespace {

// Rate samples kept per host, whatever the window: bounds memory if a host floods.
constexpr size_t kMaxDocsSamples = 256;
// Longest "last event" cell, in characters, so one long message cannot widen the table.
constexpr size_t kMaxLastEventWidth = 48;

// Counters come off the wire: saturate instead of overflowing on hostile values.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

std::string FormatDocs(int64_t done, int64_t total, bool estimated) {
  if (total < 0) return GroupThousands(done) + " / ?";
  std::string text = GroupThousands(done) + " / " + (estimated ? "~" : "") + GroupThousands(total);
  if (total > 0) text += fmt::format(" ({:.1f}%)", 100.0 * done / total);
  return text;
}

std::string Ago(double now, double then) {
  return FormatDuration(std::max(0.0, now - then)) + " ago";
}

}  // namespace

void MonitorView::Apply(const MonitorEventMessage& event) { Apply(event, event.unix_seconds); }

void MonitorView::Apply(const MonitorEventMessage& event, double received_unix_seconds) {
  // About the job's coordinators, not a host's run.
  if (event.kind == kStandbyEventKind) return void(standby_feed_ = event.message);
  auto found = hosts_.find(event.host_id);
  if (found == hosts_.end()) {
    if (hosts_.size() >= kMaxHosts) {
      ++ignored_events_;
      return;
    }
    found = hosts_.emplace(event.host_id, HostState{}).first;
  }
  ++events_;
  expected_hosts_ = std::max(expected_hosts_, event.num_hosts);
  HostState& host = found->second;
  if (event.kind == "started") host = HostState{};
  host.last_received = received_unix_seconds;
  if (event.kind == "error") ++errors_;
  if (event.kind == kLostEventKind) return Lose(host, event.message);
  // Until it starts again, a lost host's work belongs to the hosts that took it over.
  if (host.lost) return;
  host.state = event.kind;
  if (event.kind == "finished") host.finished = true;
  if (event.kind == "error") host.failed = true;
  host.docs_through = std::max(host.docs_through, event.docs_through());
  host.docs_listed = std::max(host.docs_listed, event.docs_done);
  host.docs_through_listed = std::max(host.docs_through_listed, event.docs_through_listed);
  host.tokens_listed = std::max(host.tokens_listed, event.tokens_done);
  if (event.docs_total >= 0) {
    host.docs_total = event.docs_total;
    host.docs_total_estimated = event.docs_total_estimated;
    host.docs_total_of_job = event.docs_total_of_job;
  }
  host.tokens_computed = std::max(host.tokens_computed, event.tokens_computed);
  host.tokens_per_second = event.tokens_per_second;
  host.shards_written = std::max(host.shards_written, event.shards_written);
  host.rejected = std::max(host.rejected, event.rejected);
  if (!event.message.empty()) {
    const bool routine = event.kind == "shard_written" || event.kind == "progress";
    host.note = routine ? event.message : event.kind + ": " + event.message;
  }

  // A clock that stepped back makes old samples meaningless for a rate.
  auto& samples = host.docs_samples;
  if (!std::isfinite(event.unix_seconds) ||
      (!samples.empty() && event.unix_seconds < samples.back().first)) {
    samples.clear();
  }
  if (std::isfinite(event.unix_seconds)) {
    samples.emplace_back(event.unix_seconds, host.docs_through);
  }
  while (samples.size() > kMaxDocsSamples ||
         (samples.size() > 2 && samples.back().first - samples[1].first >= kRateWindowSeconds)) {
    samples.pop_front();
  }
}

void MonitorView::Lose(HostState& host, const std::string& reason) {
  host.lost = true;
  host.failed = false;  // a host that failed is lost too: the job went on without it
  host.state = "lost";
  host.docs_through = host.docs_through_listed;
  host.rejected = std::max<int64_t>(0, host.docs_through_listed - host.docs_listed);
  host.tokens_computed = host.tokens_listed;
  host.tokens_per_second = 0;
  host.docs_samples.clear();
  host.note = "lost: " + reason;
}

void MonitorView::RecordSkipped(std::string reason) {
  ++skipped_;
  last_skip_reason_ = std::move(reason);
}

bool MonitorView::AllFinished() const {
  return !hosts_.empty() && hosts_.size() >= static_cast<size_t>(expected_hosts_) &&
         std::all_of(hosts_.begin(), hosts_.end(),
                     [](const auto& host) { return host.second.finished || host.second.lost; });
}

double MonitorView::DocsPerSecond(const HostState& host) {
  if (host.docs_samples.size() < 2) return -1;
  const auto& [first_time, first_docs] = host.docs_samples.front();
  const auto& [last_time, last_docs] = host.docs_samples.back();
  if (last_time <= first_time || last_docs <= first_docs) return -1;
  return double(last_docs - first_docs) / (last_time - first_time);
}

double MonitorView::EtaSeconds(const HostState& host) {
  if (host.finished) return 0;
  if (host.docs_total < 0) return -1;
  const int64_t remaining = host.docs_total - host.docs_through;
  if (remaining <= 0) return 0;
  const double docs_per_second = DocsPerSecond(host);
  return docs_per_second > 0 ? remaining / docs_per_second : -1;
}

MonitorView::JobDocs MonitorView::SumJobDocs() const {
  JobDocs job;
  bool every_total_known = true;
  int64_t hosts_total = 0;
  double latest_estimate = -std::numeric_limits<double>::infinity();
  for (const auto& [id, host] : hosts_) {
    job.through = SaturatingAdd(job.through, host.docs_through);
    every_total_known = every_total_known && host.docs_total >= 0;
    if (host.docs_total < 0) continue;
    if (!host.docs_total_of_job) {
      hosts_total = SaturatingAdd(hosts_total, host.docs_total);
      job.estimated = job.estimated || host.docs_total_estimated;
      continue;
    }
    // Hosts read the same corpus: one that met its end knows the job's total exactly;
    // otherwise the latest estimate has seen the most bytes.
    const bool better = !job.of_job || (job.estimated && !host.docs_total_estimated) ||
                        (job.estimated && host.last_received >= latest_estimate);
    if (better) {
      job.of_job = true;
      job.total = host.docs_total;
      job.estimated = host.docs_total_estimated;
      latest_estimate = host.last_received;
    }
  }
  if (!job.of_job) job.total = every_total_known ? hosts_total : -1;
  return job;
}

double MonitorView::JobEtaSeconds(const JobDocs& docs) const {
  const auto running = [](const HostState& host) {
    return !host.finished && !host.failed && !host.lost;
  };
  if (!docs.of_job) {
    double slowest = 0;
    for (const auto& [id, host] : hosts_) {
      if (!running(host)) continue;
      const double seconds = EtaSeconds(host);
      if (seconds < 0) return -1;
      slowest = std::max(slowest, seconds);
    }
    return slowest;
  }
  if (docs.total < 0) return -1;
  double docs_per_second = 0;
  for (const auto& [id, host] : hosts_) {
    if (running(host)) docs_per_second += std::max(0.0, DocsPerSecond(host));
  }
  const int64_t remaining = docs.total - docs.through;
  if (remaining <= 0) return 0;
  return docs_per_second > 0 ? remaining / docs_per_second : -1;
}

std::string MonitorView::DocsLegend(const JobDocs& job) {
  const std::string what = "docs: computed (in shards listed or being filled) or rejected";
  if (job.total < 0) return what + "; the job's total is not known yet\n";
  const char* source = job.estimated ? "estimated from the JSONL bytes read so far"
                                     : "exact (Parquet row counts, or the corpus read to its end)";
  return fmt::format("{}, of the job's total {}{}, {}\n", what, job.estimated ? "~" : "",
                     GroupThousands(job.total), source);
}

std::string MonitorView::RenderTable(double now_unix_seconds) const {
  std::vector<std::vector<std::string>> rows = {
      {"host", "state", "docs", "tokens", "tok/s", "shards", "rejected", "last event", "ETA"}};
  const std::vector<Align> aligns = {Align::kLeft,  Align::kLeft,  Align::kRight,
                                     Align::kRight, Align::kRight, Align::kRight,
                                     Align::kRight, Align::kLeft,  Align::kRight};
  int64_t tokens = 0, shards = 0, rejected = 0;
  double tokens_per_second = 0;
  double last_received = -std::numeric_limits<double>::infinity();
  size_t finished = 0, failed = 0, lost = 0, running = 0;
  const JobDocs job = SumJobDocs();
  for (const auto& [id, host] : hosts_) {
    // A leased host's share is what it is granted (a host that only follows another's
    // grants writes nothing): its row shows what it did, the total row the job's.
    const bool leased = host.docs_total_of_job || (job.of_job && host.docs_total < 0);
    std::string eta;
    bool running_now = false;
    if (host.finished) {
      eta = "done";
      ++finished;
    } else if (host.failed) {
      eta = "failed";
      ++failed;
    } else if (host.lost) {
      eta = "lost";
      ++lost;
    } else {
      ++running;
      running_now = true;
      eta = leased ? "-" : FormatDuration(EtaSeconds(host));
      tokens_per_second += std::isfinite(host.tokens_per_second) && host.tokens_per_second > 0
                               ? host.tokens_per_second
                               : 0;
    }
    std::string last_event = Ago(now_unix_seconds, host.last_received);
    if (!host.note.empty()) last_event += "  " + host.note;
    const std::string docs =
        leased ? GroupThousands(host.docs_through)
               : FormatDocs(host.docs_through, host.docs_total, host.docs_total_estimated);
    rows.push_back({std::to_string(id), TerminalSafe(host.state, 16), docs,
                    GroupThousands(host.tokens_computed),
                    running_now ? FormatRate(host.tokens_per_second) : "-",
                    GroupThousands(host.shards_written), GroupThousands(host.rejected),
                    TerminalSafe(last_event, kMaxLastEventWidth), eta});
    tokens = SaturatingAdd(tokens, host.tokens_computed);
    shards = SaturatingAdd(shards, host.shards_written);
    rejected = SaturatingAdd(rejected, host.rejected);
    last_received = std::max(last_received, host.last_received);
  }
  if (hosts_.empty()) {
    return RenderRows(rows, aligns) + "(no event yet: waiting for the job's nodes)\n";
  }
  std::string state = fmt::format("{}/{} finished", finished, hosts_.size());
  if (failed > 0) state += fmt::format(", {} failed", failed);
  if (lost > 0) state += fmt::format(", {} lost", lost);
  // Without a lost host's share (a job whose hosts own their shares), the job ended
  // short of its total: its command finishes it.
  const bool short_of_total = lost > 0 && job.total >= 0 && job.through < job.total;
  const std::string job_eta_text = running > 0      ? FormatDuration(JobEtaSeconds(job))
                                   : failed > 0     ? "failed"
                                   : short_of_total ? "incomplete"
                                                    : "done";
  rows.push_back({"total", state, FormatDocs(job.through, job.total, job.estimated),
                  GroupThousands(tokens), running > 0 ? FormatRate(tokens_per_second) : "-",
                  GroupThousands(shards), GroupThousands(rejected),
                  Ago(now_unix_seconds, last_received), job_eta_text});
  std::string table = RenderRows(rows, aligns) + DocsLegend(job);
  if (!standby_feed_.empty()) {
    table += fmt::format("the standby coordinator's feed (followed if host 0 is lost): {}\n",
                         TerminalSafe(standby_feed_, 120));
  }
  if (skipped_ > 0) {
    table += fmt::format("skipped {} message(s) that were not monitor events; last: {}\n", skipped_,
                         TerminalSafe(last_skip_reason_, 120));
  }
  if (ignored_events_ > 0) {
    table += fmt::format("ignored {} event(s) of hosts beyond the first {}\n", ignored_events_,
                         kMaxHosts);
  }
  return table;
}

std::string MonitorView::JsonLine(const MonitorEventMessage& event) {
  // The schema's own map (MSGPACK_DEFINE_MAP): every field, by its name, in its order.
  msgpack::sbuffer packed;
  msgpack::pack(packed, event);
  const auto bytes = reinterpret_cast<const uint8_t*>(packed.data());
  const auto line = nlohmann::ordered_json::from_msgpack(bytes, bytes + packed.size());
  return line.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace actex
