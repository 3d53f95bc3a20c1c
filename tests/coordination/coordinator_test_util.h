#ifndef ACTEX_TESTS_COORDINATION_COORDINATOR_TEST_UTIL_H_
#define ACTEX_TESTS_COORDINATION_COORDINATOR_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "tests/transport/free_tcp_port.h"
#include "tests/transport/wait_until.h"
#include "transport/actor.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex::coordinator_test {

// Coordinator options for tests: free ports, timeouts in the hundreds of ms.
inline CoordinatorOptions FastOptions(int num_hosts) {
  CoordinatorOptions options;
  options.port = FreeTcpPort();
  options.monitor_port = FreeTcpPort({options.port});
  options.monitor_collect_port = FreeTcpPort({options.port, options.monitor_port});
  options.num_hosts = num_hosts;
  options.join_timeout = std::chrono::milliseconds(3000);
  options.liveness.heartbeat_interval = std::chrono::milliseconds(50);
  options.liveness.heartbeat_timeout = std::chrono::milliseconds(2000);
  options.liveness.disconnect_grace = std::chrono::milliseconds(2000);
  options.final_drain = std::chrono::milliseconds(100);
  options.linger = std::chrono::milliseconds(1000);
  options.counters = std::make_shared<CoordinatorCounters>();
  return options;
}

// Client options that match a coordinator's.
inline CoordinatorClientOptions ClientOptionsFor(const CoordinatorOptions& coordinator) {
  CoordinatorClientOptions options;
  options.coordinator_address = "127.0.0.1";
  options.port = coordinator.port;
  options.join_timeout = coordinator.join_timeout;
  options.join_margin = std::chrono::milliseconds(1000);
  options.liveness = coordinator.liveness;
  options.linger = std::chrono::milliseconds(1000);
  return options;
}

// A Hello that agrees with every other host's made by this function.
inline HelloMessage MakeHello(int host_id, int num_hosts) {
  HelloMessage hello;
  hello.host_id = host_id;
  hello.num_hosts = num_hosts;
  hello.software_version = "actex test 1";
  hello.fingerprint = {{"--mesh", "data=2,model=3"},
                       {"--layers", "20,21"},
                       {"--model", "0f3a"},
                       {"--data", "corpus.jsonl"}};
  hello.endpoints = {{"ring/replica0/rank" + std::to_string(host_id),
                      "tcp://127.0.0.1:" + std::to_string(40000 + host_id)}};
  return hello;
}

// The Hellos of hosts 0 to num_hosts - 1 of one job.
inline std::vector<HelloMessage> Hellos(int num_hosts) {
  std::vector<HelloMessage> hellos;
  for (int id = 0; id < num_hosts; ++id) hellos.push_back(MakeHello(id, num_hosts));
  return hellos;
}

using JoinResult = std::expected<std::unique_ptr<CoordinatorClient>, std::string>;

// Joins every Hello at once, one thread each, and returns the results in order.
inline std::vector<JoinResult> JoinAll(zmq::context_t& context,
                                       const CoordinatorClientOptions& options,
                                       const std::vector<HelloMessage>& hellos) {
  std::vector<JoinResult> results;
  for (size_t i = 0; i < hellos.size(); ++i) results.emplace_back(std::unexpected("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < hellos.size(); ++i) {
    threads.emplace_back(
        [&, i] { results[i] = CoordinatorClient::Join(context, options, hellos[i]); });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

// Runs body(i) for every client on its own thread and returns the results in order.
inline std::vector<std::expected<void, std::string>> ForEachClient(
    std::vector<JoinResult>& clients,
    const std::function<std::expected<void, std::string>(CoordinatorClient&, size_t)>& body) {
  std::vector<std::expected<void, std::string>> results(clients.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < clients.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = body(**clients[i], i); });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

using ::actex::WaitUntil;  // tests/transport/wait_until.h

// A coordinator whose hosts stop together by `stop_groups` (a group number per host),
// whose crashes show within 0.3 s and silences after `heartbeat_timeout`, and every
// host joined; `adjust` changes the options before the coordinator starts.
struct JoinedJob {
  explicit JoinedJob(
      const std::vector<int>& stop_groups,
      std::chrono::milliseconds heartbeat_timeout = std::chrono::seconds(10),
      const std::function<void(CoordinatorOptions&)>& adjust = [](CoordinatorOptions&) {})
      : options(FastOptions(static_cast<int>(stop_groups.size()))) {
    options.stop_groups = stop_groups;
    options.liveness.heartbeat_timeout = heartbeat_timeout;
    options.liveness.disconnect_grace = std::chrono::milliseconds(300);
    adjust(options);
    auto started = StartCoordinator(context, options);
    EXPECT_TRUE(started.has_value()) << started.error();
    if (!started) return;
    coordinator = std::move(*started);
    clients = JoinAll(context, ClientOptionsFor(options), Hellos(options.num_hosts));
    for (const JoinResult& client : clients) EXPECT_TRUE(client.has_value()) << client.error();
  }
  bool started() const {
    return coordinator && std::ranges::all_of(clients, [](const auto& c) { return c.has_value(); });
  }

  zmq::context_t context;
  CoordinatorOptions options;
  std::unique_ptr<Actor> coordinator;
  std::vector<JoinResult> clients;
};

// A node's PUB, connected to the coordinator's monitor collector.
inline zmq::socket_t NodePublisher(zmq::context_t& context, const CoordinatorOptions& options) {
  zmq::socket_t publisher(context, zmq::socket_type::pub);
  publisher.set(zmq::sockopt::linger, 0);
  publisher.connect("tcp://127.0.0.1:" + std::to_string(options.monitor_collect_port));
  return publisher;
}

// A monitor's SUB to everything, attached to the coordinator's monitor feed.
inline zmq::socket_t Monitor(zmq::context_t& context, const CoordinatorOptions& options) {
  zmq::socket_t monitor(context, zmq::socket_type::sub);
  monitor.set(zmq::sockopt::linger, 0);
  monitor.set(zmq::sockopt::subscribe, "");  // events are published with an empty topic
  monitor.connect("tcp://127.0.0.1:" + std::to_string(options.monitor_port));
  return monitor;
}

// Every event waiting at `monitor` within `wait`, decoded.
inline std::vector<MonitorEventMessage> Collect(zmq::socket_t& monitor,
                                                std::chrono::milliseconds wait) {
  std::vector<MonitorEventMessage> events;
  while (true) {
    auto received = Receive(monitor, wait);
    EXPECT_TRUE(received.has_value()) << received.error().message;
    if (!received || !*received) return events;
    auto event = (*received)->As<MonitorEventMessage>();
    EXPECT_TRUE(event.has_value()) << event.error();
    if (event) events.push_back(*event);
    wait = std::chrono::milliseconds(0);
  }
}

// A monitor attached to the coordinator's feed once its subscription has reached the
// coordinator (subscriptions travel asynchronously: once a node's event came through,
// so will whatever the coordinator publishes itself); nullopt if it never did.
inline std::optional<zmq::socket_t> SubscribedMonitor(zmq::context_t& context,
                                                      const CoordinatorOptions& options) {
  zmq::socket_t monitor = Monitor(context, options);
  zmq::socket_t node = NodePublisher(context, options);
  const bool subscribed = WaitUntil([&] {
    EXPECT_TRUE(Send(node, MonitorEventMessage{}).has_value());
    return !Collect(monitor, std::chrono::milliseconds(20)).empty();
  });
  if (!subscribed) return std::nullopt;
  return monitor;
}

}  // namespace actex::coordinator_test

#endif  // ACTEX_TESTS_COORDINATION_COORDINATOR_TEST_UTIL_H_
