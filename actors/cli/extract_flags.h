#ifndef ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_
#define ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_

#include <expected>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "actors/extract_options.h"
#include "actors/node.h"

namespace actex {

// Flags shared by every command that runs an extraction (extract, and later node and
// simulate). The text fields are parsed after CLI11 so errors can name the flag.
struct ExtractFlags {
  ExtractOptions options;
  std::string layers, dtype, overflow = "truncate", shard_size = "1GB", compress = "none";
  std::vector<std::string> sites;
};

// Registers the extraction flags on `command`, writing into `flags`. The shard count
// is `--shards` for extract and `--shards-per-host` for node and simulate.
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
// Reads --job-key-file if given, so a bad key is refused before any work starts.
std::expected<void, std::string> CheckJobKey(const NodeOptions& node);


}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_
