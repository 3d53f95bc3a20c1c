// What the standby coordinator's tests share: host 0's coordinator and its standby,
// each with the real lease log, and real clients, over tcp on 127.0.0.1. One of the
// two coordinators runs in a forked process, so that it can be lost the way a host
// is: by SIGKILL, saying nothing.
#ifndef ACTEX_TESTS_ACTORS_STANDBY_COORDINATOR_FIXTURE_H_
#define ACTEX_TESTS_ACTORS_STANDBY_COORDINATOR_FIXTURE_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "coordination/job_leases.h"
#include "storage/host_folder_files.h"
#include "tests/coordination/coordinator_test_util.h"
#include "tests/support/test_files.h"
#include "transport/wire.h"

namespace actex::standby_test {

using coordinator_test::ClientOptionsFor;
using coordinator_test::FastOptions;
using coordinator_test::JoinAll;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using coordinator_test::WaitUntil;
using namespace std::chrono_literals;

inline constexpr int kHosts = 4;
inline constexpr int kStandbyHost = 1;

// A coordinator in a child process, started with `options` and the lease desk
// `open_leases` makes there; it runs until killed.
class ForkedCoordinator {
 public:
  ForkedCoordinator(CoordinatorOptions options,
                    const std::function<std::shared_ptr<LeaseDesk>()>& open_leases) {
    int pipe_fds[2];
    EXPECT_EQ(::pipe(pipe_fds), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(pipe_fds[0]);
      zmq::context_t context;
      options.leases = open_leases();
      auto started = StartCoordinator(context, options);
      const std::string endpoint = started ? options.counters->control_endpoint : "";
      (void)::write(pipe_fds[1], endpoint.data(), endpoint.size());
      ::close(pipe_fds[1]);
      for (;;) ::pause();
    }
    ::close(pipe_fds[1]);
    char buffer[256] = {};
    const ssize_t got = ::read(pipe_fds[0], buffer, sizeof(buffer) - 1);
    ::close(pipe_fds[0]);
    endpoint_ = got > 0 ? std::string(buffer, static_cast<size_t>(got)) : "";
  }
  ~ForkedCoordinator() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  pid_t pid_ = -1;
  std::string endpoint_;
};

// Sends `message` to the coordinator at `endpoint` from a new peer and returns the
// reason of the Abort it answers with ("" when none came within 3 s).
template <typename Message>
std::string AbortFor(zmq::context_t& context, const std::string& endpoint, const Message& message) {
  zmq::socket_t peer(context, zmq::socket_type::dealer);
  peer.set(zmq::sockopt::linger, 0);
  peer.connect(endpoint);
  EXPECT_TRUE(Send(peer, message).has_value());
  auto answer = Receive(peer, 3000ms);
  if (!answer || !*answer || (*answer)->type != MessageType::kAbort) return "";
  auto abort = (*answer)->As<AbortMessage>();
  return abort ? abort->reason : "";
}

// A StandbyUpdate of one record, as host 0's coordinator sends it.
inline StandbyUpdateMessage Update(uint64_t first, const std::string& record,
                                   const std::vector<int32_t>& hosts) {
  StandbyUpdateMessage update;
  update.first = first;
  update.records = {record};
  update.hosts = hosts;
  return update;
}

struct StandbyCoordinatorTest : testing::Test {
  CoordinatorOptions Primary() {
    CoordinatorOptions options = FastOptions(kHosts);
    options.liveness = liveness;
    options.stop_groups = {0, 1, 2, 3};
    options.standby_host = kStandbyHost;
    return options;
  }
  CoordinatorOptions Standby() {
    CoordinatorOptions options = Primary();
    options.standby = true;
    options.port = 0;  // any free ports
    options.counters = std::make_shared<CoordinatorCounters>();
    return options;
  }
  std::shared_ptr<LeaseDesk> PrimaryLeases() {
    auto leases = JobLeases::Open(dir.path() + "/leases.log", 8);
    EXPECT_TRUE(leases) << leases.error();
    return std::move(*leases);
  }
  std::shared_ptr<LeaseDesk> StandbyLeases() {
    auto leases = JobLeases::OpenStandbyCopy(standby_log, 8);
    EXPECT_TRUE(leases) << leases.error();
    return std::move(*leases);
  }
  // Every host joins the primary; host 1 publishes where the standby listens.
  std::vector<JoinResult> JoinJob(zmq::context_t& context, const CoordinatorOptions& primary,
                                  const std::string& standby_endpoint) {
    std::vector<HelloMessage> hellos;
    for (int host = 0; host < kHosts; ++host) hellos.push_back(MakeHello(host, kHosts));
    hellos[kStandbyHost].endpoints[kStandbyEndpointKey] = standby_endpoint;
    std::vector<JoinResult> clients = JoinAll(context, ClientOptionsFor(primary), hellos);
    for (const JoinResult& client : clients) EXPECT_TRUE(client) << client.error();
    return clients;
  }
  // Services every client in `serviced` until `client` has a grant; returns it.
  static LeaseGrantMessage AwaitGrant(std::vector<JoinResult>& clients, int client,
                                      const std::vector<int>& serviced,
                                      std::chrono::milliseconds limit = 5000ms) {
    std::vector<LeaseGrantMessage> grants;
    EXPECT_TRUE(WaitUntil(
        [&] {
          for (int host : serviced) (void)(*clients[host])->Service();
          grants = (*clients[client])->TakeGrants();
          return !grants.empty();
        },
        limit))
        << "host " << client << " got no grant";
    return grants.empty() ? LeaseGrantMessage{} : grants.front();
  }
  // Host 0's coordinator here, the standby in a child process, every host joined.
  void StartWithAForkedStandby() {
    standby = std::make_unique<ForkedCoordinator>(Standby(), [&] { return StandbyLeases(); });
    ASSERT_FALSE(standby->endpoint().empty());
    context = std::make_unique<zmq::context_t>();
    primary = Primary();
    primary.leases = PrimaryLeases();
    auto started = StartCoordinator(*context, primary);
    ASSERT_TRUE(started) << started.error();
    host0 = std::move(*started);
    clients = JoinJob(*context, primary, standby->endpoint());
  }
  // StartWithAForkedStandby with these timeouts, and host 2 granted chunk 0 (which the
  // standby holds, since host 0 answered).
  void StartAndGrantHost2AChunk(std::chrono::milliseconds heartbeat_timeout,
                                std::chrono::milliseconds disconnect_grace) {
    liveness.heartbeat_timeout = heartbeat_timeout;
    liveness.disconnect_grace = disconnect_grace;
    ASSERT_NO_FATAL_FAILURE(StartWithAForkedStandby());
    (*clients[2])->RequestLease({1, -1});
    ASSERT_EQ(AwaitGrant(clients, 2, {0, 1, 2, 3}).chunk, 0);
  }
  // Host 0's coordinator in a child process, so that it can be lost as a host is
  // (forked_host0->Kill()), the standby here (standby_options), every host joined;
  // `adjust` changes the two coordinators' options first.
  void StartWithAForkedHost0(const std::function<void(CoordinatorOptions& primary,
                                                      CoordinatorOptions& standby)>& adjust = {}) {
    primary = Primary();
    standby_options = Standby();
    if (adjust) adjust(primary, standby_options);
    forked_host0 = std::make_unique<ForkedCoordinator>(primary, [&] { return PrimaryLeases(); });
    context = std::make_unique<zmq::context_t>();
    standby_options.leases = StandbyLeases();
    auto started = StartCoordinator(*context, standby_options);
    ASSERT_TRUE(started) << started.error();
    standby_here = std::move(*started);
    clients = JoinJob(*context, primary, standby_options.counters->control_endpoint);
  }
  // Services every client in `serviced` until the standby took the job over.
  static bool AwaitTakeover(std::vector<JoinResult>& clients, const std::vector<int>& serviced,
                            const CoordinatorCounters& standby) {
    return WaitUntil(
        [&] {
          for (int host : serviced) (void)(*clients[host])->Service();
          return standby.took_over.load();
        },
        5000ms);
  }
  static bool AwaitAck(CoordinatorClient& client) {
    std::vector<ListingAckMessage> acks;
    EXPECT_TRUE(WaitUntil([&] {
      (void)client.Service();
      acks = client.TakeListingAcks();
      return !acks.empty();
    }));
    return !acks.empty() && acks.front().accepted;
  }

  Liveness liveness{
      .heartbeat_interval = 100ms, .heartbeat_timeout = 1000ms, .disconnect_grace = 1000ms};
  TempDir dir;
  const std::string standby_log = dir.path() + "/" + kStandbyLeaseLogFile;
  // What StartWithAForkedStandby starts, made after the fork.
  std::unique_ptr<ForkedCoordinator> standby;
  std::unique_ptr<zmq::context_t> context;
  CoordinatorOptions primary;
  std::unique_ptr<Actor> host0;
  // What StartWithAForkedHost0 starts.
  std::unique_ptr<ForkedCoordinator> forked_host0;
  CoordinatorOptions standby_options;
  std::unique_ptr<Actor> standby_here;
  std::vector<JoinResult> clients;
};

}  // namespace actex::standby_test

#endif  // ACTEX_TESTS_ACTORS_STANDBY_COORDINATOR_FIXTURE_H_
