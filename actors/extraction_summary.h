#ifndef ACTEX_ACTORS_EXTRACTION_SUMMARY_H_
#define ACTEX_ACTORS_EXTRACTION_SUMMARY_H_

#include <cstdint>
#include <string>

#include "transport/schema.h"

namespace actex {

// How a supervised run ended.
enum class RunEnding {
  kCompleted,  // every actor finished its work
  kDrained,    // a stop signal: the pipeline ended early, after the chunks in progress
  // A stop signal, and the pipeline stopped where it was, its writer listing the
  // chunks that ended: the drain outlasted --drain-timeout, or the job has several
  // hosts (a replica may span hosts, so they stop together).
  kDrainTimedOut,
  kJobStopped,
  kStoppedAtOnce,  // a second stop signal: the open shard is dropped
  // A stop signal while the host waited at the final barrier: its part was complete.
  kLeftFinalBarrier,
};

// What one host's run did: what its folder holds, how long it took, how it ended.
struct ExtractionSummary {
  std::string host_dir;  // OUT/host_NN; empty when this host writes nothing
  int64_t docs = 0, tokens = 0, shards = 0, rejected = 0;  // in the folder, earlier runs' too
  int64_t tokens_resumed = 0;    // of `tokens`, those an earlier run had written (kept)
  double load_seconds = 0;       // config, weights and tokenizer, before any document
  double extract_seconds = 0;    // first document to the end of the run
  double tokens_per_second = 0;  // tokens this run computed, per extract second
  // Not kCompleted when a stop signal (stop_signal: its number) ended the run early:
  // the folder then holds what was listed, and the same command resumes.
  RunEnding ending = RunEnding::kCompleted;
  int stop_signal = 0;
  // When it stopped, the job went on without it: a host of a leased job other than 0,
  // or host 0 handing the job over to the standby (hands_over).
  bool job_goes_on = false;
  bool hands_over = false;

  // Takes what the folder holds from the writer's last event.
  void TakeCounts(const MonitorEventMessage& last);
};

// The line the extract and node commands end with: what the folder holds, and this
// run's tokens/s, or that an earlier run had already done everything.
std::string SummaryLine(const ExtractionSummary& summary);

// The line a run a stop signal ended early ends with: how it stopped, what the folder
// keeps, and that the same command resumes.
std::string StopLine(const ExtractionSummary& summary);

// The exit status of a run a stop signal ended early: 75 (EX_TEMPFAIL, "try again"),
// so schedulers and scripts can tell a preempted run from a failed or finished one.
inline constexpr int kExitStoppedBySignal = 75;

}  // namespace actex

#endif  // ACTEX_ACTORS_EXTRACTION_SUMMARY_H_
