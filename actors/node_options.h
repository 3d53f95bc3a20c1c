#ifndef ACTEX_ACTORS_NODE_OPTIONS_H_
#define ACTEX_ACTORS_NODE_OPTIONS_H_

#include <chrono>
#include <string>

#include "actors/extract_options.h"

namespace actex {

struct StopSignals;  // node_supervisor.h

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

}  // namespace actex

#endif  // ACTEX_ACTORS_NODE_OPTIONS_H_
