#include "coordination/coordinator_sockets.h"

#include <spdlog/fmt/fmt.h>

#include <utility>

#include "transport/interrupted.h"

namespace actex {
namespace {

// Control ports the kernel picks before Bind gives up finding one whose next two are
// free: on a host with a few free ports in ten, the odds of 64 misses are nil.
constexpr int kAnyPortsAttempts = 64;

// The control ROUTER bound at `port` (0: any free port).
std::expected<zmq::socket_t, std::string> BindControl(zmq::context_t& context,
                                                      const CoordinatorOptions& options, int port) {
  const std::string address =
      fmt::format("{}:{}", options.bind_address, port == 0 ? "*" : std::to_string(port));
  try {
    zmq::socket_t control(context, zmq::socket_type::router);
    control.set(zmq::sockopt::linger, static_cast<int>(options.linger.count()));
    control.set(zmq::sockopt::maxmsgsize, kMaxControlFrameBytes);
    if (options.security) {
      if (auto secured = options.security->ApplyServer(control); !secured) {
        return std::unexpected("control socket (ROUTER): " + secured.error());
      }
    }
    RetryInterrupted([&] { control.bind("tcp://" + address); });
    return control;
  } catch (const zmq::error_t& e) {
    return std::unexpected(
        fmt::format("cannot bind the control socket (ROUTER) to {}: {}", address, e.what()));
  }
}

std::expected<std::unique_ptr<MonitorRelay>, std::string> BindRelay(
    zmq::context_t& context, const CoordinatorOptions& options) {
  MonitorRelayOptions relay;
  relay.bind_address = options.bind_address;
  relay.subscriber_port = options.monitor_port;
  relay.publisher_port = options.monitor_collect_port;
  relay.security = options.security;
  return MonitorRelay::Bind(context, relay);
}

// The port a socket bound to "tcp://ADDRESS:*" was given, or 0.
int BoundPort(zmq::socket_t& socket) {
  return TcpEndpointPort(socket.get(zmq::sockopt::last_endpoint));
}

}  // namespace

std::expected<CoordinatorSockets, std::string> CoordinatorSockets::Bind(
    zmq::context_t& context, CoordinatorOptions& options) {
  CoordinatorSockets sockets;
  const bool any_ports = options.port == 0;
  std::string last_error;
  for (int attempt = 0; attempt < (any_ports ? kAnyPortsAttempts : 1); ++attempt) {
    auto control = BindControl(context, options, options.port);
    if (!control) return std::unexpected(control.error());
    if (any_ports) {
      const int port = BoundPort(*control);
      if (port < 1 || port + kEventsPortOffset > 65535) {
        last_error = fmt::format("control port {} has no two ports after it", port);
        continue;
      }
      options.monitor_port = port + kMonitorPortOffset;
      options.monitor_collect_port = port + kEventsPortOffset;
    }
    auto relay = BindRelay(context, options);
    if (!relay) {
      last_error = relay.error();
      continue;
    }
    sockets.control = std::move(*control);
    sockets.relay = std::move(*relay);
    break;
  }
  if (!sockets.relay) {
    return std::unexpected(
        any_ports ? fmt::format("found no three free ports in a row on {} in {} tries: {}",
                                options.bind_address, kAnyPortsAttempts, last_error)
                  : last_error);
  }
  if (any_ports) options.port = BoundPort(sockets.control);
  options.counters->control_endpoint = sockets.control.get(zmq::sockopt::last_endpoint);

  auto watch = ConnectionWatch::Create(context, sockets.control);
  if (!watch) return std::unexpected("control socket: " + watch.error());
  sockets.control_watch = std::move(*watch);
  // Strangers' failed handshakes on the monitor ports are counted like the control
  // port's.
  for (zmq::socket_t* watched : {&sockets.relay->publishers(), &sockets.relay->subscribers()}) {
    auto relay_watch = ConnectionWatch::Create(context, *watched);
    if (!relay_watch) return std::unexpected("monitor relay: " + relay_watch.error());
    sockets.relay_watches.push_back(std::move(*relay_watch));
  }
  return sockets;
}

}  // namespace actex
