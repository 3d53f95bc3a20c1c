#include "coordination/job_coordinator.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

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

Liveness JobLiveness(std::chrono::milliseconds heartbeat_timeout) {
  Liveness liveness;
  liveness.heartbeat_timeout = heartbeat_timeout;
  liveness.disconnect_grace = std::min(liveness.disconnect_grace, heartbeat_timeout);
  return liveness;
}

std::expected<std::unique_ptr<Actor>, std::string> StartJobCoordinator(
    zmq::context_t& context, const JobCoordinatorSettings& settings,
    std::shared_ptr<const JobSecurity> security, std::shared_ptr<CoordinatorCounters> counters) {
  const int standby = settings.standby_host;
  if (settings.host_id != 0 && settings.host_id != standby) return std::unique_ptr<Actor>();
  const CoordinatorAddress& coordinator = settings.coordinator;
  // Others connect to the address a flag names; this process listens on --bind if given.
  auto listen_on = [&settings](const std::string& named_host) {
    return settings.bind_address.empty() ? named_host : settings.bind_address;
  };
  CoordinatorOptions coordinating;
  coordinating.bind_address = listen_on(coordinator.host);
  coordinating.port = coordinator.port;  // the monitor ports follow it (0: their default)
  coordinating.num_hosts = settings.num_hosts;
  coordinating.max_hosts = settings.max_hosts;
  coordinating.security = security;
  coordinating.join_timeout = settings.join_timeout;
  coordinating.liveness = settings.liveness;
  coordinating.stop_groups = settings.stop_groups;
  coordinating.lease_followers = settings.lease_followers;
  coordinating.standby_host = standby;
  coordinating.counters = counters;
  if (!settings.host_folder.empty()) {
    // The log lives beside the host's shards: PrepareOutput made (or emptied) the folder.
    const std::filesystem::path folder = settings.host_folder;
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    auto leases =
        settings.host_id == 0
            ? JobLeases::Open((folder / kLeaseLogFile).string(), settings.chunks.docs_per_chunk(),
                              settings.share)
            : JobLeases::OpenStandbyCopy((folder / kStandbyLeaseLogFile).string(),
                                         settings.chunks.docs_per_chunk(), settings.share);
    if (!leases) return std::unexpected("the lease log: " + leases.error());
    coordinating.leases = std::move(*leases);
    coordinating.finished_record_folder = folder.string();
  }
  if (settings.host_id == standby) {
    coordinating.standby = true;
    coordinating.port = 0;  // any free ports
    if (settings.standby_at) {
      const CoordinatorAddress& at = *settings.standby_at;
      coordinating.bind_address = listen_on(at.host);
      coordinating.port = at.port;
    }
  }
  return StartCoordinator(context, coordinating);
}

}  // namespace actex
