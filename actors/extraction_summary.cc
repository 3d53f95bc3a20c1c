#include "actors/extraction_summary.h"

#include <spdlog/fmt/fmt.h>

#include <csignal>

namespace actex {

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

}  // namespace actex
