#include "actors/extraction_summary.h"

#include <spdlog/fmt/fmt.h>

#include <csignal>
#include <nlohmann/json.hpp>

namespace actex {
namespace {

// How many kinds of reject reason a TooManyRejected message names.
constexpr size_t kReasonsNamed = 3;

}  // namespace

void ExtractionSummary::TakeCounts(const MonitorEventMessage& last) {
  docs = last.docs_done;
  tokens = last.tokens_done;
  shards = last.shards_written;
  rejected = last.rejected;
}

std::string StopLine(const ExtractionSummary& summary) {
  const std::string signal = summary.stop_signal == SIGTERM  ? "SIGTERM"
                             : summary.stop_signal == SIGINT ? "SIGINT"
                             : summary.stop_signal == SIGHUP ? "SIGHUP"
                                                             : std::to_string(summary.stop_signal);
  const std::string kept =
      summary.host_dir.empty() ? std::string("this host writes no output")
      : summary.ending == RunEnding::kStoppedAtOnce
          ? fmt::format("{} keeps every shard its metadata.json lists; the open one was dropped",
                        summary.host_dir)
          : fmt::format("{} keeps {} documents ({} tokens) in {} shard(s), all listed",
                        summary.host_dir, summary.docs, summary.tokens, summary.shards);
  const char* how = summary.ending == RunEnding::kDrained ? "drained at a chunk's end"
                    : summary.ending == RunEnding::kDrainTimedOut
                        ? "the drain outlasted --drain-timeout: stopped where it was"
                    : summary.ending == RunEnding::kJobStopped
                        ? "a host of a job of several hosts: stopped where it was"
                    : summary.ending == RunEnding::kLeftFinalBarrier
                        ? "its part was complete; it was waiting for the other hosts"
                        : "stopped at once";
  const char* next =
      !summary.job_goes_on ? "run the same command to resume"
      : summary.hands_over
          ? "the standby coordinator takes the job over and the hosts still in it take over its "
            "chunks; once the job ended, the same command resumes anything left"
      : summary.ending == RunEnding::kLeftFinalBarrier ? "the job finishes without it"
      // Its replica spans hosts: it cannot come back alone.
      : summary.ending == RunEnding::kJobStopped
          ? "the other replicas take over its replica's chunks"
          : "the hosts still in the job take over its chunks, and the same command rejoins the "
            "job (or resumes it)";
  return fmt::format("stopped by {} ({}): {}; {}", signal, how, kept, next);
}

std::string SummaryLine(const ExtractionSummary& summary) {
  if (!summary.job_finished_before.empty()) return summary.job_finished_before;
  if (summary.host_dir.empty())
    return "done; this host computed its shards of other hosts' replicas";
  const std::string held = fmt::format("{} documents ({} tokens) in {} shard(s)", summary.docs,
                                       summary.tokens, summary.shards);
  const std::string rejected = fmt::format("{} line(s) rejected{}", summary.rejected,
                                           summary.rejected > 0 ? " (see rejects.jsonl)" : "");
  if (summary.tokens == summary.tokens_resumed && summary.tokens_resumed > 0) {
    return fmt::format("{} was already complete: {}; nothing left to compute; {}", summary.host_dir,
                       held, rejected);
  }
  return fmt::format(
      "wrote {} to {}: {:.1f} tokens/s{}; {}", held, summary.host_dir, summary.tokens_per_second,
      summary.tokens_resumed > 0 ? " over the part this run computed" : "", rejected);
}

std::expected<void, std::string> ReadFolderFindings(ExtractionSummary* summary) {
  if (summary->host_dir.empty()) return {};
  auto rejects = TallyRejectReasons(summary->host_dir + "/rejects.jsonl", kReasonsNamed);
  if (!rejects) return std::unexpected(rejects.error());
  summary->rejects = std::move(*rejects);
  auto non_finite = ReadNonFiniteSites(summary->host_dir + "/metadata.json");
  if (!non_finite) return std::unexpected(non_finite.error());
  summary->non_finite = std::move(non_finite->sites);
  summary->dtype = std::move(non_finite->dtype);
  return {};
}

std::optional<std::string> TooManyRejected(const ExtractionSummary& summary) {
  const int64_t rejected = summary.rejects.total;
  const int64_t handled = summary.docs + rejected;
  if (rejected == 0 || (summary.docs > 0 &&
                        rejected <= summary.max_reject_fraction * static_cast<double>(handled))) {
    return std::nullopt;
  }
  std::string reasons;
  for (const RejectReasons::Kind& kind : summary.rejects.kinds) {
    // As a JSON string: quotes inside the reason stay readable, bad bytes replaced.
    reasons += fmt::format("{}{} like {}", reasons.empty() ? "" : "; ", kind.count,
                           nlohmann::json(kind.example)
                               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  const std::string written = summary.docs == 0 ? "nothing was written"
                                                : fmt::format("more than --max-reject-fraction {}",
                                                              summary.max_reject_fraction);
  return fmt::format(
      "{}: {} of the {} documents this host read were rejected ({:.0f}%): {}. Most common "
      "reasons: {}. Check --text-field (the JSONL field or Parquet column that holds the "
      "text), that the corpus files are UTF-8 (a UTF-16 file is rejected line by line), and "
      "that the model folder's tokenizer is the model's own (its token ids must be below "
      "the model's vocab_size); every rejected line is listed in {}/rejects.jsonl. {} (exit "
      "status {})",
      summary.host_dir, rejected, handled, 100.0 * rejected / handled, written, reasons,
      summary.host_dir,
      summary.docs == 0
          ? std::string("The output is complete but holds no document")
          : fmt::format("The {} document(s) written stay listed in metadata.json", summary.docs),
      kExitTooManyRejected);
}

std::string NonFiniteWarning(const ExtractionSummary& summary) {
  if (summary.non_finite.empty()) return "";
  return fmt::format(
      "{}: activations that are not finite as stored in {} (NaN, or beyond the dtype's "
      "range): {} (metadata.json's statistics count them per site); check the model's "
      "weights for NaN, or use a wider --dtype (bfloat16 or float32) when float16 overflows",
      summary.host_dir, summary.dtype.empty() ? "the output dtype" : summary.dtype,
      DescribeNonFinite(summary.non_finite));
}

}  // namespace actex
