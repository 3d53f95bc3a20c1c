// CoordinatorOptions' defaults and the values the coordinator refuses.
#include "coordination/coordinator_options.h"

#include <spdlog/fmt/fmt.h>

namespace actex {
namespace {

// Far beyond any pod; a typo in --num-hosts must not make the book of hosts huge.
constexpr int kMaxHosts = 65536;

}  // namespace

int TcpEndpointPort(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  if (!endpoint.starts_with("tcp://") || colon == std::string::npos || colon < 6 ||
      colon + 1 == endpoint.size() || endpoint.size() - colon > 6) {
    return 0;
  }
  int port = 0;
  for (size_t i = colon + 1; i < endpoint.size(); ++i) {
    if (endpoint[i] < '0' || endpoint[i] > '9') return 0;
    port = port * 10 + (endpoint[i] - '0');
  }
  return port <= 65535 ? port : 0;
}

std::string CoordinatorPortEndpoint(const std::string& control_endpoint, int offset) {
  const int port = TcpEndpointPort(control_endpoint);
  if (port < 1 || port + offset > 65535) return "";
  return control_endpoint.substr(0, control_endpoint.rfind(':') + 1) +
         std::to_string(port + offset);
}

std::expected<void, std::string> CheckCoordinatorOptions(CoordinatorOptions& options) {
  // A standby on port 0 takes any free ports: its host publishes where it listens.
  const bool any_ports = options.standby && options.port == 0;
  if (any_ports) {
    options.monitor_port = options.monitor_collect_port = 0;
  } else {
    if (options.monitor_port == 0) options.monitor_port = options.port + kMonitorPortOffset;
    if (options.monitor_collect_port == 0) {
      options.monitor_collect_port = options.port + kEventsPortOffset;
    }
  }
  if (options.bind_address.empty()) return std::unexpected("no bind address given");
  if (options.standby && (!options.leases || options.standby_host < 1)) {
    return std::unexpected(std::string("a standby needs leases and its own host id"));
  }
  for (const int port : {options.port, options.monitor_port, options.monitor_collect_port}) {
    if ((port < 1 && !any_ports) || port < 0 || port > 65535) {
      return std::unexpected(fmt::format("port {} is outside 1-65535", port));
    }
  }
  if (!any_ports &&
      (options.port == options.monitor_port || options.port == options.monitor_collect_port ||
       options.monitor_port == options.monitor_collect_port)) {
    return std::unexpected(fmt::format("the ports {}, {} and {} must differ", options.port,
                                       options.monitor_port, options.monitor_collect_port));
  }
  if (options.num_hosts < 1 || options.num_hosts > kMaxHosts) {
    return std::unexpected(
        fmt::format("num_hosts is {}, must be between 1 and {}", options.num_hosts, kMaxHosts));
  }
  if (options.max_hosts == 0) options.max_hosts = options.num_hosts;
  if (options.max_hosts < options.num_hosts || options.max_hosts > kMaxHosts) {
    return std::unexpected(fmt::format("max_hosts is {}, must be between num_hosts {} and {}",
                                       options.max_hosts, options.num_hosts, kMaxHosts));
  }
  if (!options.stop_groups.empty() &&
      options.stop_groups.size() != static_cast<size_t>(options.num_hosts)) {
    return std::unexpected(fmt::format("stop_groups names {} hosts, the job has {}",
                                       options.stop_groups.size(), options.num_hosts));
  }
  auto group_of = [&](int host) {
    return options.stop_groups.empty() ? 0 : options.stop_groups.at(host);
  };
  for (const auto& [leader, followers] : options.lease_followers) {
    for (int follower : followers) {
      if (leader < 0 || follower < 0 || leader >= options.num_hosts ||
          follower >= options.num_hosts || group_of(leader) != group_of(follower)) {
        return std::unexpected(fmt::format(
            "lease follower {} of host {} is not a host of the job in the same stop group",
            follower, leader));
      }
    }
  }
  if (options.max_hosts > options.num_hosts && !options.leases) {
    return std::unexpected(std::string(
        "added hosts (max_hosts above num_hosts) need leases: only leased hosts can take on "
        "part of a running job"));
  }
  using std::chrono::milliseconds;
  if (options.join_timeout <= milliseconds(0)) {
    return std::unexpected(std::string("join_timeout must be positive"));
  }
  return options.liveness.Check();
}

}  // namespace actex
