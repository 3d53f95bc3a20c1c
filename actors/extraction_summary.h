#ifndef ACTEX_ACTORS_EXTRACTION_SUMMARY_H_
#define ACTEX_ACTORS_EXTRACTION_SUMMARY_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "storage/non_finite_sites.h"
#include "storage/reject_reasons.h"
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
  // Not empty when the job had finished before this node joined it (FindFinishedJob):
  // why this node computed nothing, the line it ends with (exit 0).
  std::string job_finished_before;

  // What the folder says about the documents and values it holds, read once the run
  // completed (ReadFolderFindings): its rejects.jsonl, earlier runs' too (a resume keeps
  // the rejects of the chunks it keeps), and the sites with non-finite values.
  RejectReasons rejects;
  std::vector<NonFiniteSite> non_finite;
  std::string dtype;                 // as metadata.json records it
  double max_reject_fraction = 0.5;  // --max-reject-fraction

  // Takes what the folder holds from the writer's last event.
  void TakeCounts(const MonitorEventMessage& last);
};

// Fills summary->rejects, non_finite and dtype from the folder's rejects.jsonl and
// metadata.json; nothing when this host writes no folder. Errors name the file.
std::expected<void, std::string> ReadFolderFindings(ExtractionSummary* summary);

// Why a completed run is suspect, or nullopt: this host's folder rejected documents
// and wrote none, or rejected more than --max-reject-fraction of the documents it
// handled (written + rejected, earlier runs' too). Says how many, the most common
// reasons and what to check, and names rejects.jsonl. Decided per host folder.
std::optional<std::string> TooManyRejected(const ExtractionSummary& summary);

// A warning naming the sites whose stored values are not finite and how many, or ""
// when there are none.
std::string NonFiniteWarning(const ExtractionSummary& summary);

// The line the extract and node commands end with: what the folder holds, and this
// run's tokens/s, or that an earlier run had already done everything (or the job had
// finished before this node joined).
std::string SummaryLine(const ExtractionSummary& summary);

// The line a run a stop signal ended early ends with: how it stopped, what the folder
// keeps, and that the same command resumes.
std::string StopLine(const ExtractionSummary& summary);

// The exit status of a run a stop signal ended early: 75 (EX_TEMPFAIL, "try again"),
// so schedulers and scripts can tell a preempted run from a failed or finished one.
inline constexpr int kExitStoppedBySignal = 75;

// The exit status of a run that completed but rejected too much (TooManyRejected):
// what it wrote is valid and listed, yet it is most likely not what was meant.
inline constexpr int kExitTooManyRejected = 3;

}  // namespace actex

#endif  // ACTEX_ACTORS_EXTRACTION_SUMMARY_H_
