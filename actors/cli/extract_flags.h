#ifndef ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_
#define ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_

#include <CLI/CLI.hpp>
#include <expected>
#include <string>
#include <vector>

#include "actors/extract_options.h"
#include "actors/extraction_summary.h"
#include "actors/node_options.h"

namespace actex {

// What the user wrote for each flag of actors/extract_flag_table.h, by row: CLI11
// collects the texts, the table's rows parse them, so errors name the flag.
struct ExtractFlags {
  std::vector<std::string> names;               // as registered
  std::vector<std::vector<std::string>> texts;  // kOne, kMany
  std::vector<int> switches;                    // kSwitch: times given
  std::vector<CLI::Option*> options;
};

// Registers every row of the flag table on `command`, writing into `flags`. The shard
// count is `--shards` for extract and `--shards-per-host` for node and simulate.
void AddExtractFlags(CLI::App& command, ExtractFlags& flags,
                     const std::string& shards_flag = "--shards");

// The options the parsed flags describe; errors name the flag.
std::expected<ExtractOptions, std::string> ResolveExtractFlags(const ExtractFlags& flags);

// Flags of a job of several hosts shared by node and simulate: --mesh,
// --machine-id, --total-machines, --join-timeout, --heartbeat-timeout,
// --job-key-file (also ACTEX_JOB_KEY_FILE). Timeouts are whole seconds, kept in
// `timeouts` until ApplyJobTimeouts.
struct JobTimeouts {
  double join_seconds = 300, heartbeat_seconds = 60;
};
void AddJobFlags(CLI::App& command, NodeOptions& node, JobTimeouts& timeouts);
void ApplyJobTimeouts(const JobTimeouts& timeouts, NodeOptions& node);
// Logs how a run ended (its failure, StopLine or SummaryLine, and a warning about
// non-finite activations) and returns the exit code: 0 done, 1 failed,
// kExitTooManyRejected (3) done but this host rejected too much (TooManyRejected),
// kExitStoppedBySignal (75) stopped early by a signal.
int ReportRun(const std::expected<ExtractionSummary, std::string>& summary);

// Runs `node` (PrepareNode, then RunPreparedNode) holding the lock of its host
// folder of --out (LockHostOutput) from after every flag was checked to the end;
// returns the exit code: ReportRun's, or 2 when PrepareNode refused a flag or a file
// (the model, an SAE, the tokenizer, the corpus) or another run holds the lock.
int RunLocked(const NodeOptions& node);

// Reads --job-key-file if given, so a bad key is refused before any work starts.
std::expected<void, std::string> CheckJobKey(const NodeOptions& node);

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_
