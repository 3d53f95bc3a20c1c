#ifndef ACTEX_COORDINATION_JOB_COORDINATOR_H_
#define ACTEX_COORDINATION_JOB_COORDINATOR_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "coordination/coordinator.h"
#include "coordination/lease_table.h"
#include "coordination/liveness.h"
#include "transport/actor.h"
#include "transport/job_security.h"

namespace actex {

// Where host 0's coordinator listens: --coordinator HOST:PORT (the monitor ports
// follow at PORT+1 and PORT+2).
struct CoordinatorAddress {
  std::string host;
  int port = 0;
};

// Parses --coordinator (or `flag`, which takes the same form); refused, naming the
// flag: no port, a port past 65533, a wildcard host.
std::expected<CoordinatorAddress, std::string> ParseCoordinator(
    const std::string& text, const std::string& flag = "--coordinator");

// The same on both sides: --heartbeat-timeout, and a crashed peer noticed when its
// connection drops, never later than its silence would tell.
Liveness JobLiveness(std::chrono::milliseconds heartbeat_timeout);

// What a node tells StartJobCoordinator of its job: the node fills it from its flags
// and its mesh (which host is the standby, which stop together, which follow whose
// grants), so that coordination knows neither.
struct JobCoordinatorSettings {
  int host_id = 0;
  int num_hosts = 1;
  int max_hosts = 0;  // --max-hosts; 0: num_hosts
  std::chrono::milliseconds join_timeout{300000};
  Liveness liveness;                                // JobLiveness(--heartbeat-timeout)
  std::vector<int> stop_groups;                     // CoordinatorOptions::stop_groups
  std::map<int, std::vector<int>> lease_followers;  // CoordinatorOptions::lease_followers
  int standby_host = -1;                            // CoordinatorOptions::standby_host
  CoordinatorAddress coordinator;                   // --coordinator
  std::optional<CoordinatorAddress> standby_at;     // --standby-coordinator
  // This node's --bind as given, empty when absent: where host 0's coordinator and the
  // standby listen rather than at the host that coordinator or standby_at names, which
  // the others connect to (a Kubernetes pod's DNS name may not resolve to the pod itself
  // as it starts; its --bind, the pod's IP, does).
  std::string bind_address;
  // A leased job: this host's output folder, where host 0 keeps the lease log and
  // the standby its copy (storage/host_folder_files.h names both). Empty: no leases.
  std::string host_folder;
  ChunkRule chunks;    // --chunk-docs
  MachineShare share;  // the chunks this job leases (--machine-id of --total-machines)
};

// Starts the coordinator actor this node runs: host 0's, with its lease log in its
// host folder, or, on the standby host, the standby with its copy of that log,
// listening at `standby_at`, else on free ports of the coordinator's host; each on
// `bind_address` instead when given. Null on every other host. `counters` tells the
// standby's port once it started.
std::expected<std::unique_ptr<Actor>, std::string> StartJobCoordinator(
    zmq::context_t& context, const JobCoordinatorSettings& settings,
    std::shared_ptr<const JobSecurity> security, std::shared_ptr<CoordinatorCounters> counters);

}  // namespace actex

#endif  // ACTEX_COORDINATION_JOB_COORDINATOR_H_
