// A node's joining of the job: its links to the coordinator (and, when the job names
// one, the standby's), the Hello, and the wait for the Welcome.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <random>
#include <utility>

#include "coordination/coordinator_client.h"
#include "coordination/rendezvous.h"
#include "transport/interrupted.h"
#include "transport/numeric_endpoint.h"

namespace actex {
namespace {

// A routing id that stays the same across ZeroMQ's reconnects (so the coordinator
// still knows the node) but differs between processes, even two claiming one host id.
std::string RoutingId(int host_id) {
  std::random_device random;
  const uint64_t nonce = (static_cast<uint64_t>(random()) << 32) ^ random();
  return fmt::format("host-{}-{:016x}", host_id, nonce);
}

}  // namespace

std::expected<zmq::socket_t, std::string> CoordinatorClient::Connect(
    zmq::context_t& context, const CoordinatorClientOptions& options, const std::string& routing_id,
    const std::string& endpoint) {
  zmq::socket_t socket;
  try {
    socket = zmq::socket_t(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::routing_id, routing_id);
    socket.set(zmq::sockopt::linger, static_cast<int>(options.linger.count()));
    // The supervisor must never block on the coordinator: a full queue drops.
    socket.set(zmq::sockopt::sndtimeo, 0);
    socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxBodyBytes));
    socket.set(zmq::sockopt::reconnect_ivl, 100);
    socket.set(zmq::sockopt::reconnect_ivl_max, 1000);
    // Queue before the coordinator is up (it may start after this node).
    socket.set(zmq::sockopt::immediate, false);
    if (options.security) {
      if (auto secured = options.security->ApplyClient(socket); !secured) {
        return std::unexpected(
            fmt::format("cannot connect to the coordinator at {}: {}", endpoint, secured.error()));
      }
    }
    RetryInterrupted([&] { socket.connect(NumericEndpoint(endpoint)); });
  } catch (const zmq::error_t& e) {
    return std::unexpected(
        fmt::format("cannot connect to the coordinator at {}: {}", endpoint, e.what()));
  }
  return socket;
}

std::expected<std::unique_ptr<CoordinatorClient>, std::string> CoordinatorClient::Join(
    zmq::context_t& context, const CoordinatorClientOptions& options, const HelloMessage& hello) {
  const std::string coordinator = fmt::format("{}:{}", options.coordinator_address, options.port);
  using std::chrono::milliseconds;
  if (options.coordinator_address.empty() || options.port < 1 || options.port > 65535) {
    return std::unexpected(fmt::format("no valid coordinator address given ({})", coordinator));
  }
  if (options.join_timeout <= milliseconds(0) || options.join_margin < milliseconds(0)) {
    return std::unexpected(std::string("coordinator client: join_timeout must be positive"));
  }
  if (auto usable = options.liveness.Check(); !usable) {
    return std::unexpected("coordinator client: " + usable.error());
  }
  const std::string routing_id = RoutingId(hello.host_id);
  auto socket = Connect(context, options, routing_id, "tcp://" + coordinator);
  if (!socket) return std::unexpected(socket.error());
  std::unique_ptr<CoordinatorClient> client(
      new CoordinatorClient(options, context, hello, std::move(*socket)));
  if (!options.standby_endpoint.empty()) {
    auto probe = Connect(context, options, routing_id, options.standby_endpoint);
    if (!probe) return std::unexpected(probe.error());
    client->standby_probe_ = std::move(*probe);
  }
  auto watch = ConnectionWatch::Create(context, client->socket_);
  if (!watch) return std::unexpected("coordinator connection: " + watch.error());
  client->watch_ = std::move(*watch);
  client->coordinator_endpoint_ = "tcp://" + coordinator;
  if (auto sent = Send(client->socket_, hello); !sent) {
    return std::unexpected(
        fmt::format("cannot send Hello to the coordinator at {}: {}", coordinator, sent.error()));
  }
  if (client->standby_probe_) client->ServiceStandbyProbe(Clock::now());

  const auto deadline = Clock::now() + options.join_timeout + options.join_margin;
  while (!client->welcomed_) {
    const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
    if (left <= milliseconds(0)) {
      const std::string waited = SecondsText(options.join_timeout + options.join_margin);
      if (client->last_message_) {
        return std::unexpected(fmt::format(
            "no Welcome from the coordinator at {} within {} (it answers, but not every host "
            "joined)",
            coordinator, waited));
      }
      std::string hint;
      if (client->failed_handshakes_ > 0) {
        hint = fmt::format(
            "; {} connection(s) to it ended during the ZeroMQ handshake: it runs with {} job key "
            "than this node ({}), so every host needs the same --job-key-file (or none)",
            client->failed_handshakes_, options.security ? "another (or no)" : "a",
            options.security ? "key " + options.security->key_id() : "no key");
      }
      const std::string standby =
          options.standby_endpoint.empty()
              ? ""
              : fmt::format(" (nor from the standby coordinator at {})", options.standby_endpoint);
      return std::unexpected(fmt::format("no answer from the coordinator at {}{} within {}{}",
                                         coordinator, standby, waited, hint));
    }
    auto serviced = client->WaitAndService(std::min(left, options.liveness.heartbeat_interval));
    if (!serviced) return std::unexpected(serviced.error());
  }
  spdlog::info("host {}: joined the job; {} endpoint(s) known", hello.host_id,
               client->endpoints_.size());
  return client;
}

}  // namespace actex
