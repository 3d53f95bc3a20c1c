#ifndef ACTEX_ACTORS_NODE_H_
#define ACTEX_ACTORS_NODE_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>

#include "actors/extract_options.h"
#include "actors/extraction_summary.h"
#include "actors/node_supervisor.h"

namespace actex {

// How one host takes part in a job. A job of one host needs no coordinator.
struct NodeOptions {
  ExtractOptions extract;  // extract.shards is the number of shards on this host
  int host_id = 0;
  int num_hosts = 1;
  // Host ids num_hosts to max_hosts - 1 may join the running job later and take
  // leases (a leased job only); 0: num_hosts. Host 0's value counts.
  int max_hosts = 0;
  std::string mesh = "1d";  // 1d, 2d or data=D,model=M
  int machine_id = 0;       // independent jobs splitting one corpus
  int total_machines = 1;
  std::string coordinator;  // "HOST:PORT" of host 0; empty for a job of one host
  // "HOST:PORT" where the standby coordinator listens (on MeshPlan::StandbyHost), so
  // that a node started after host 0 was lost finds it; empty: it picks free ports,
  // which only the job's hosts learn.
  std::string standby_coordinator;
  std::string bind_address;  // interface for this node's tcp sockets; default: 127.0.0.1
                             // when the coordinator is on loopback, else that interface
  std::chrono::milliseconds join_timeout{300000};
  std::chrono::milliseconds heartbeat_timeout{60000};
  // --job-key-file: every tcp socket of a job of several hosts runs CURVE with keys
  // derived from this file (transport/job_security.h); empty: an open job.
  std::string job_key_file;
  // SIGTERM/SIGINT as the command's handlers count them (actors/cli/stop_signals.h);
  // null: the node does not watch signals.
  const StopSignals* stop_signals = nullptr;
};

// One host's node: loader -> tokenizer(s) -> device shards -> writer, each an actor
// with its own thread and sockets, joined by inproc ZeroMQ links with bounded
// queues; device shards of a replica that spans hosts reduce over tcp. Everything
// is checked before the first document is read; any failure, here or on another
// host, stops every actor, and an open shard is never listed.
std::expected<ExtractionSummary, std::string> RunNode(const NodeOptions& options);

struct NodeResources;  // node_resources.h

// RunNode on what PrepareNode made of `options` (started at `load_start`): the
// command line prepares first, so that every flag is refused before it locks the
// output folder (LockHostOutput), and locks before anything there is touched.
std::expected<ExtractionSummary, std::string> RunPreparedNode(
    const NodeOptions& options, const NodeResources& resources,
    std::chrono::steady_clock::time_point load_start);

// `actex extract`: the node of a job with one host and one replica.
std::expected<ExtractionSummary, std::string> RunExtraction(
    const ExtractOptions& options, const StopSignals* stop_signals = nullptr);

}  // namespace actex

#endif  // ACTEX_ACTORS_NODE_H_
