#include "actors/cli/local_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "actors/extract_flag_table.h"
#include "actors/extract_options.h"
#include "actors/extraction_summary.h"

extern char** environ;

namespace actex {
namespace {

// Whether 127.0.0.1:port can be bound now (the socket is closed again at once).
bool LoopbackPortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return bound;
}

// The first port the kernel hands out on its own (bind to port 0, a connection's
// source): /proc/sys/net/ipv4/ip_local_port_range's low end, 32768 where unreadable.
int FirstEphemeralPort() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  return range >> low && low > 0 ? low : 32768;
}

std::string Seconds(std::chrono::milliseconds duration) {
  return std::to_string(duration.count() / 1000.0);
}

}  // namespace

std::expected<int, std::string> FindFreePortTriple() {
  // Below the ephemeral range, so that no connection made meanwhile (any process's
  // outgoing source port, a bind to port 0) takes one of the three before the nodes
  // bind them.
  const int end = std::min(FirstEphemeralPort(), 65536);
  constexpr int kFirst = 10000;
  if (end - kFirst < 3) return std::unexpected("no loopback ports below the ephemeral range");
  std::minstd_rand random(static_cast<unsigned>(
      std::chrono::steady_clock::now().time_since_epoch().count() ^ getpid()));
  std::uniform_int_distribution<int> pick(kFirst, end - 3);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = pick(random);
    if (LoopbackPortFree(port) && LoopbackPortFree(port + 1) && LoopbackPortFree(port + 2)) {
      return port;
    }
  }
  return std::unexpected("found no three consecutive free loopback ports");
}

std::vector<std::string> LocalNodeArgs(const LocalClusterOptions& options, int host_id, int port) {
  const NodeOptions& node = options.node;
  std::vector<std::string> args = {
      options.actex_binary,
      "node",
      "--coordinator",
      node.coordinator.empty() ? "127.0.0.1:" + std::to_string(port) : node.coordinator,
      "--host-id",
      std::to_string(host_id),
      "--num-hosts",
      std::to_string(options.hosts),
      "--bind",
      node.bind_address.empty() ? "127.0.0.1" : node.bind_address,
      "--mesh",
      node.mesh,
      "--machine-id",
      std::to_string(node.machine_id),
      "--total-machines",
      std::to_string(node.total_machines),
      "--join-timeout",
      Seconds(node.join_timeout),
      "--heartbeat-timeout",
      Seconds(node.heartbeat_timeout)};
  if (node.max_hosts != 0) {
    args.push_back("--max-hosts");
    args.push_back(std::to_string(node.max_hosts));
  }
  if (!node.standby_coordinator.empty()) {
    args.push_back("--standby-coordinator");
    args.push_back(node.standby_coordinator);
  }
  if (!node.job_key_file.empty()) {
    args.push_back("--job-key-file");
    args.push_back(node.job_key_file);
  }
  ExtractOptions extract = node.extract;
  if (extract.blas_threads == 0) {
    // Every node of the simulation shares this machine's cores.
    extract.blas_threads = DefaultBlasThreads(options.hosts * extract.shards);
  }
  for (std::string& arg : ExtractOptionsToArgs(extract)) args.push_back(std::move(arg));
  return args;
}

std::expected<void, LocalClusterError> RunLocalCluster(const LocalClusterOptions& options) {
  auto port = FindFreePortTriple();
  if (!port)
    return std::unexpected(LocalClusterError{LocalClusterError::Kind::kFailed, port.error()});
  std::map<pid_t, int> running;  // pid -> host id
  for (int host = 0; host < options.hosts; ++host) {
    std::vector<std::string> args = LocalNodeArgs(options, host, *port);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (int error = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
        error != 0) {
      for (const auto& [started, id] : running) kill(started, SIGKILL);
      return std::unexpected(
          LocalClusterError{LocalClusterError::Kind::kFailed,
                            "cannot start " + options.actex_binary + ": " + strerror(error)});
    }
    running[pid] = host;
  }
  spdlog::info("simulating {} hosts on 127.0.0.1 (coordinator port {}), mesh {}", options.hosts,
               *port, options.node.mesh);

  std::vector<std::string> failures;
  bool only_rejected_too_much = true;  // every failure a node's kExitTooManyRejected
  bool only_refused = true;            // every failure a node's usage error (2)
  // When the hosts still running are killed; max(): not set.
  auto kill_at = std::chrono::steady_clock::time_point::max();
  while (!running.empty()) {
    int status = 0;
    rusage usage{};
    pid_t pid = wait4(-1, &status, WNOHANG, &usage);
    if (pid <= 0) {
      if (std::chrono::steady_clock::now() > kill_at) {
        for (const auto& [left, host] : running) {
          kill(left, SIGKILL);
          only_rejected_too_much = only_refused = false;
          failures.push_back("host " + std::to_string(host) + " did not stop and was killed");
        }
        kill_at = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    auto found = running.find(pid);
    if (found == running.end()) continue;
    const int host = found->second;
    running.erase(found);
    // Each node's own peak memory (ru_maxrss is in KiB on Linux), for bench/ and users
    // sizing hosts: a simulated host maps only the weights its shards read.
    spdlog::info("host {} exited with code {}; peak RSS {:.0f} MB", host,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss / 1024.0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitTooManyRejected) {
      // The node completed and its output is whole; the job goes on without a stop.
      only_refused = false;
      failures.push_back("host " + std::to_string(host) + " rejected too much (exit status " +
                         std::to_string(kExitTooManyRejected) + "; see its log)");
      continue;
    }
    only_rejected_too_much = false;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 2) only_refused = false;
    failures.push_back("host " + std::to_string(host) +
                       (WIFEXITED(status)
                            ? " exited with code " + std::to_string(WEXITSTATUS(status))
                            : " was killed by signal " + std::to_string(WTERMSIG(status))));
    if (kill_at == std::chrono::steady_clock::time_point::max()) {
      kill_at = std::chrono::steady_clock::now() + options.node.heartbeat_timeout +
                std::chrono::seconds(10);
    }
  }
  if (failures.empty()) return {};
  std::string message =
      only_rejected_too_much ? "the simulated job completed, but " : "the simulated job failed: ";
  for (size_t i = 0; i < failures.size(); ++i) message += (i ? "; " : "") + failures[i];
  using Kind = LocalClusterError::Kind;
  const Kind kind = only_rejected_too_much ? Kind::kTooManyRejected
                    : only_refused         ? Kind::kRefused
                                           : Kind::kFailed;
  return std::unexpected(LocalClusterError{kind, std::move(message)});
}

}  // namespace actex
