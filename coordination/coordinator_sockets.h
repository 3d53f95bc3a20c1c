#ifndef ACTEX_COORDINATION_COORDINATOR_SOCKETS_H_
#define ACTEX_COORDINATION_COORDINATOR_SOCKETS_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "coordination/coordinator_options.h"
#include "coordination/monitor_relay.h"
#include "transport/connection_watch.h"

namespace actex {

// A larger control frame closes the sender's connection: a Hello of a host with
// thousands of endpoints is a few hundred kB.
inline constexpr int64_t kMaxControlFrameBytes = int64_t{16} << 20;

// The sockets a coordinator listens on: the control ROUTER (the nodes' requests) and
// the monitor relay's XPUB and XSUB, each watched for connections. They are three
// ports in a row (CoordinatorPortEndpoint): where the kernel picks them (a standby
// given port 0) Bind asks for a control port whose next two are free, so a
// coordinator's control endpoint tells everyone where its monitors attach and its
// nodes publish.
struct CoordinatorSockets {
  // Binds at `options`' ports, or at any three in a row when options.port is 0 (then
  // the ports found are written into `options`); sets counters->control_endpoint.
  static std::expected<CoordinatorSockets, std::string> Bind(zmq::context_t& context,
                                                             CoordinatorOptions& options);

  zmq::socket_t control;
  std::unique_ptr<MonitorRelay> relay;
  // Declared after the sockets they watch, so they are destroyed (and stop watching)
  // first.
  std::unique_ptr<ConnectionWatch> control_watch;
  std::vector<std::unique_ptr<ConnectionWatch>> relay_watches;
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_COORDINATOR_SOCKETS_H_
