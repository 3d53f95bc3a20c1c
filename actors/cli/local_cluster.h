#ifndef ACTEX_ACTORS_CLI_LOCAL_CLUSTER_H_
#define ACTEX_ACTORS_CLI_LOCAL_CLUSTER_H_

#include <expected>
#include <string>
#include <vector>

#include "actors/node_options.h"

namespace actex {

// `actex simulate`: a job of `hosts` real `actex node` processes on 127.0.0.1, with
// real tcp between them, exactly as they would run on separate machines.
struct LocalClusterOptions {
  std::string actex_binary;  // the executable to start as each node
  int hosts = 2;
  // Everything but host_id and num_hosts; bind_address is 127.0.0.1 and coordinator
  // 127.0.0.1 at the port given unless set, and node.job_key_file is passed on to
  // every node.
  NodeOptions node;
};

// Picks three free consecutive loopback ports (coordinator, monitor, monitor feed),
// below the ephemeral range so that no connection's source port takes one meanwhile.
std::expected<int, std::string> FindFreePortTriple();

// The command line of host `host_id`'s node, for a coordinator on `port` (of
// 127.0.0.1 unless options.node.coordinator names its HOST:PORT).
std::vector<std::string> LocalNodeArgs(const LocalClusterOptions& options, int host_id, int port);

// Why a simulated job did not end well.
struct LocalClusterError {
  enum class Kind {
    kFailed,           // a node failed, was killed, or could not start
    kTooManyRejected,  // every node completed, and some rejected too much (exit status 3)
    kRefused,          // every node that failed refused its command before any work (2)
  };
  Kind kind = Kind::kFailed;
  std::string message;
};

// Starts every node (host 0 first), waits for all of them, and returns success only
// when every node exited 0. Nodes stop one another when one fails; any node still
// running a heartbeat timeout after the first failure is killed.
std::expected<void, LocalClusterError> RunLocalCluster(const LocalClusterOptions& options);

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_LOCAL_CLUSTER_H_
