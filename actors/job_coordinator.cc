#include "actors/job_coordinator.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "actors/job_link.h"
#include "coordination/job_leases.h"
#include "storage/host_folder_files.h"

namespace actex {

std::expected<CoordinatorAddress, std::string> ParseCoordinator(const std::string& text,
                                                                const std::string& flag) {
  const size_t colon = text.rfind(':');
  CoordinatorAddress address;
  if (colon == std::string::npos || colon == 0) {
    return std::unexpected(flag + " " + text + ": expected HOST:PORT (e.g. 10.0.0.10:8476)");
  }
  address.host = text.substr(0, colon);
  if (address.host == "localhost") address.host = "127.0.0.1";
  // Host 0's coordinator binds this address: a wildcard would open it on every
  // interface, and other hosts could not connect to it anyway.
  if (address.host == "0.0.0.0" || address.host == "*" || address.host == "::" ||
      address.host == "[::]") {
    return std::unexpected(flag + " " + text +
                           ": name the address that the other hosts reach (e.g. "
                           "10.0.0.10:8476), not a wildcard");
  }
  auto [end, error] =
      std::from_chars(text.data() + colon + 1, text.data() + text.size(), address.port);
  if (error != std::errc() || end != text.data() + text.size() || address.port < 1 ||
      address.port > 65533) {
    return std::unexpected(flag + " " + text +
                           ": the port must be a number from 1 to 65533 (the next two ports "
                           "carry monitor events)");
  }
  return address;
}

Liveness JobLiveness(const NodeOptions& options) {
  Liveness liveness;
  liveness.heartbeat_timeout = options.heartbeat_timeout;
  liveness.disconnect_grace = std::min(liveness.disconnect_grace, options.heartbeat_timeout);
  return liveness;
}

std::expected<std::unique_ptr<Actor>, std::string> StartJobCoordinator(
    zmq::context_t& context, const NodeOptions& options, const MeshPlan& mesh,
    const CoordinatorAddress& coordinator, const std::optional<CoordinatorAddress>& standby_at,
    std::shared_ptr<const JobSecurity> security, std::shared_ptr<CoordinatorCounters> counters) {
  const int standby = mesh.StandbyHost();
  if (options.host_id != 0 && options.host_id != standby) return std::unique_ptr<Actor>();
  CoordinatorOptions coordinating;
  coordinating.bind_address = coordinator.host;
  coordinating.port = coordinator.port;
  coordinating.monitor_port = coordinator.port + 1;
  coordinating.monitor_collect_port = coordinator.port + 2;
  coordinating.num_hosts = mesh.hosts;
  coordinating.max_hosts = options.max_hosts;
  coordinating.security = security;
  coordinating.join_timeout = options.join_timeout;
  coordinating.liveness = JobLiveness(options);
  coordinating.stop_groups = mesh.StopGroups();
  coordinating.lease_followers = mesh.LeaseFollowers();
  coordinating.standby_host = standby;
  coordinating.counters = counters;
  if (mesh.Leased()) {
    // The log lives beside the host's shards: PrepareOutput made (or emptied) the folder.
    const std::filesystem::path folder =
        std::filesystem::path(options.extract.out_dir) / mesh.HostFolder(options.host_id);
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    const LeaseTable::Share share{mesh.machine_id, mesh.total_machines};
    auto leases = options.host_id == 0
                      ? JobLeases::Open((folder / kLeaseLogFile).string(), mesh.chunk_docs, share)
                      : JobLeases::OpenStandbyCopy((folder / kStandbyLeaseLogFile).string(),
                                                   mesh.chunk_docs, share);
    if (!leases) return std::unexpected("the lease log: " + leases.error());
    coordinating.leases = std::move(*leases);
  }
  if (options.host_id == standby) {
    coordinating.standby = true;
    coordinating.bind_address = JobLink::BindAddress(options);
    coordinating.port = 0;  // any free ports
    if (standby_at) {
      coordinating.bind_address = standby_at->host;
      coordinating.port = standby_at->port;
      coordinating.monitor_port = standby_at->port + 1;
      coordinating.monitor_collect_port = standby_at->port + 2;
    }
  }
  return StartCoordinator(context, coordinating);
}

}  // namespace actex
