#include "actors/monitor_view.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

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

// 1234567 -> "1,234,567".
std::string GroupThousands(int64_t value) {
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return negative ? "-" + grouped : grouped;
}

std::string FormatRate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "?";
  if (per_second >= 9e18) return ">9e18";
  return GroupThousands(std::llround(per_second));
}

// 42 -> "42s", 185 -> "3m05s", 7440 -> "2h04m", 266400 -> "3d02h".
std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds >= 1000.0 * 86400) return ">999d";
  const int64_t whole = std::llround(seconds);
  if (whole < 60) return fmt::format("{}s", whole);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  if (whole < 86400) return fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
  return fmt::format("{}d{:02}h", whole / 86400, whole % 86400 / 3600);
}

std::string FormatDocs(int64_t done, int64_t total, bool estimated) {
  if (total < 0) return GroupThousands(done) + " / ?";
  std::string text = GroupThousands(done) + " / " + (estimated ? "~" : "") + GroupThousands(total);
  if (total > 0) text += fmt::format(" ({:.1f}%)", 100.0 * done / total);
  return text;
}

// Text from the wire made safe for a terminal: at most `max_chars` characters, control
// characters (C0, DEL, C1: they could move the cursor or recolour the screen) become
// spaces and bytes that are not UTF-8 become '?'.
std::string TerminalSafe(const std::string& text, size_t max_chars) {
  std::string safe;
  size_t i = 0;
  for (size_t chars = 0; i < text.size() && chars < max_chars; ++chars) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    uint32_t code = 0;
    if (lead < 0x80) {
      length = 1, code = lead;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2, code = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3, code = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4, code = lead & 0x07;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr std::array<uint32_t, 5> kSmallest = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && code >= kSmallest[length] && code <= 0x10FFFF &&
            !(code >= 0xD800 && code <= 0xDFFF);
    if (!valid) {
      safe += '?';
      i += 1;
      continue;
    }
    if (code < 0x20 || (code >= 0x7F && code < 0xA0)) {
      safe += ' ';
    } else {
      safe.append(text, i, length);
    }
    i += length;
  }
  if (i < text.size() && !safe.empty()) {
    // Show that the text was cut: replace the last character by '~'.
    while ((static_cast<unsigned char>(safe.back()) & 0xC0) == 0x80) safe.pop_back();
    safe.back() = '~';
  }
  return safe;
}

// Characters a terminal shows for UTF-8 `text` (one per code point; wide glyphs are rare
// in these fields and only misalign their own row).
size_t DisplayWidth(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

enum class Align { kLeft, kRight };

std::string RenderRows(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<Align>& aligns) {
  std::vector<size_t> widths(aligns.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string padding(widths[c] - DisplayWidth(row[c]), ' ');
      if (c > 0) line += "  ";
      line += aligns[c] == Align::kRight ? padding + row[c] : row[c] + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

std::string Ago(double now, double then) {
  return FormatDuration(std::max(0.0, now - then)) + " ago";
}

}  // namespace

void MonitorView::Apply(const MonitorEventMessage& event) { Apply(event, event.unix_seconds); }

void MonitorView::Apply(const MonitorEventMessage& event, double received_unix_seconds) {
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
  host.state = event.kind;
  host.last_received = received_unix_seconds;
  if (event.kind == "finished") host.finished = true;
  if (event.kind == "error") {
    host.failed = true;
    ++errors_;
  }
  host.docs_done = std::max(host.docs_done, event.docs_done);
  if (event.docs_total >= 0) {
    host.docs_total = event.docs_total;
    host.docs_total_estimated = event.docs_total_estimated;
  }
  host.tokens_done = std::max(host.tokens_done, event.tokens_done);
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
  if (std::isfinite(event.unix_seconds)) samples.emplace_back(event.unix_seconds, host.docs_done);
  while (samples.size() > kMaxDocsSamples ||
         (samples.size() > 2 && samples.back().first - samples[1].first >= kRateWindowSeconds)) {
    samples.pop_front();
  }
}

void MonitorView::RecordSkipped(std::string reason) {
  ++skipped_;
  last_skip_reason_ = std::move(reason);
}

bool MonitorView::AllFinished() const {
  return !hosts_.empty() && hosts_.size() >= static_cast<size_t>(expected_hosts_) &&
         std::all_of(hosts_.begin(), hosts_.end(),
                     [](const auto& host) { return host.second.finished; });
}

double MonitorView::EtaSeconds(const HostState& host) {
  if (host.finished) return 0;
  if (host.docs_total < 0) return -1;
  const int64_t remaining = host.docs_total - host.docs_done;
  if (remaining <= 0) return 0;
  if (host.docs_samples.size() < 2) return -1;
  const auto& [first_time, first_docs] = host.docs_samples.front();
  const auto& [last_time, last_docs] = host.docs_samples.back();
  if (last_time <= first_time || last_docs <= first_docs) return -1;
  const double docs_per_second = double(last_docs - first_docs) / (last_time - first_time);
  return remaining / docs_per_second;
}

std::string MonitorView::RenderTable(double now_unix_seconds) const {
  std::vector<std::vector<std::string>> rows = {
      {"host", "state", "docs", "tokens", "tok/s", "shards", "rejected", "last event", "ETA"}};
  const std::vector<Align> aligns = {Align::kLeft,  Align::kLeft,  Align::kRight,
                                     Align::kRight, Align::kRight, Align::kRight,
                                     Align::kRight, Align::kLeft,  Align::kRight};
  int64_t docs_done = 0, docs_total = 0, tokens = 0, shards = 0, rejected = 0;
  bool totals_known = true, totals_estimated = false;
  double tokens_per_second = 0;
  double last_received = -std::numeric_limits<double>::infinity();
  size_t finished = 0, failed = 0, running = 0;
  double job_eta = 0;  // the slowest running host's; negative once one is unknown
  for (const auto& [id, host] : hosts_) {
    std::string eta;
    if (host.finished) {
      eta = "done";
      ++finished;
    } else if (host.failed) {
      eta = "failed";
      ++failed;
    } else {
      ++running;
      const double seconds = EtaSeconds(host);
      eta = FormatDuration(seconds);
      job_eta = seconds < 0 || job_eta < 0 ? -1 : std::max(job_eta, seconds);
      tokens_per_second += std::isfinite(host.tokens_per_second) && host.tokens_per_second > 0
                               ? host.tokens_per_second
                               : 0;
    }
    std::string last_event = Ago(now_unix_seconds, host.last_received);
    if (!host.note.empty()) last_event += "  " + host.note;
    rows.push_back({std::to_string(id), TerminalSafe(host.state, 16),
                    FormatDocs(host.docs_done, host.docs_total, host.docs_total_estimated),
                    GroupThousands(host.tokens_done),
                    host.finished || host.failed ? "-" : FormatRate(host.tokens_per_second),
                    GroupThousands(host.shards_written), GroupThousands(host.rejected),
                    TerminalSafe(last_event, kMaxLastEventWidth), eta});
    docs_done = SaturatingAdd(docs_done, host.docs_done);
    totals_known = totals_known && host.docs_total >= 0;
    totals_estimated = totals_estimated || host.docs_total_estimated;
    if (host.docs_total >= 0) docs_total = SaturatingAdd(docs_total, host.docs_total);
    tokens = SaturatingAdd(tokens, host.tokens_done);
    shards = SaturatingAdd(shards, host.shards_written);
    rejected = SaturatingAdd(rejected, host.rejected);
    last_received = std::max(last_received, host.last_received);
  }
  if (hosts_.empty()) {
    return RenderRows(rows, aligns) + "(no event yet: waiting for the job's nodes)\n";
  }
  std::string state = fmt::format("{}/{} finished", finished, hosts_.size());
  if (failed > 0) state += fmt::format(", {} failed", failed);
  const std::string job_eta_text = running > 0  ? FormatDuration(job_eta)
                                   : failed > 0 ? "failed"
                                                : "done";
  rows.push_back({"total", state,
                  FormatDocs(docs_done, totals_known ? docs_total : -1, totals_estimated),
                  GroupThousands(tokens), running > 0 ? FormatRate(tokens_per_second) : "-",
                  GroupThousands(shards), GroupThousands(rejected),
                  Ago(now_unix_seconds, last_received), job_eta_text});
  std::string table = RenderRows(rows, aligns);
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
  nlohmann::ordered_json line;
  line["kind"] = event.kind;
  line["host_id"] = event.host_id;
  line["unix_seconds"] = event.unix_seconds;
  line["docs_done"] = event.docs_done;
  line["docs_total"] = event.docs_total;
  line["docs_total_estimated"] = event.docs_total_estimated;
  line["tokens_done"] = event.tokens_done;
  line["tokens_per_second"] = event.tokens_per_second;
  line["shards_written"] = event.shards_written;
  line["rejected"] = event.rejected;
  line["message"] = event.message;
  line["num_hosts"] = event.num_hosts;
  return line.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace actex
