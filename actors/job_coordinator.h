#ifndef ACTEX_ACTORS_JOB_COORDINATOR_H_
#define ACTEX_ACTORS_JOB_COORDINATOR_H_

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "actors/mesh_plan.h"
#include "actors/node.h"
#include "coordination/coordinator.h"
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
Liveness JobLiveness(const NodeOptions& options);

// Starts the coordinator actor this node runs: host 0's, with its lease log in
// OUT/host_00, or, on MeshPlan::StandbyHost(), the standby with its copy of that log,
// listening at `standby_at` (--standby-coordinator), else on free ports of this node's
// --bind address. Null on every other host. `counters`
// tells the standby's port once it started.
std::expected<std::unique_ptr<Actor>, std::string> StartJobCoordinator(
    zmq::context_t& context, const NodeOptions& options, const MeshPlan& mesh,
    const CoordinatorAddress& coordinator, const std::optional<CoordinatorAddress>& standby_at,
    std::shared_ptr<const JobSecurity> security, std::shared_ptr<CoordinatorCounters> counters);

}  // namespace actex

#endif  // ACTEX_ACTORS_JOB_COORDINATOR_H_
