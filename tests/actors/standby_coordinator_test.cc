// Host 0's coordinator and its standby, each with the real lease log, and real
// clients, over tcp on 127.0.0.1. One of the two coordinators runs in a forked
// process, so that it can be lost the way a host is: by SIGKILL, saying nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/whole_file.h"
#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "coordination/job_leases.h"
#include "storage/host_folder_files.h"
#include "tests/actors/extraction_reader.h"
#include "tests/coordination/coordinator_test_util.h"
#include "tests/support/test_files.h"
#include "transport/wire.h"

namespace actex {
namespace {

using coordinator_test::ClientOptionsFor;
using coordinator_test::Collect;
using coordinator_test::FastOptions;
using coordinator_test::JoinAll;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using coordinator_test::SubscribedMonitor;
using coordinator_test::WaitUntil;
using namespace std::chrono_literals;

constexpr int kHosts = 4;
constexpr int kStandbyHost = 1;

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
StandbyUpdateMessage Update(uint64_t first, const std::string& record,
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
  std::vector<JoinResult> clients;
};

// Host 0's coordinator killed: hosts 1-3 reattach to the standby, which takes over
// with the copy of the lease log it kept: the chunk host 2 listed stays listed, the
// one host 3 was allowed to list (its report lost with host 0) is listed from what
// host 3 says, and host 0's unlisted chunk goes to the next host that asks.
TEST_F(StandbyCoordinatorTest, TakesOverAKilledHost0KnowingEveryGrantAndListing) {
  CoordinatorOptions primary = Primary();
  ForkedCoordinator host0(primary, [&] { return PrimaryLeases(); });
  zmq::context_t context;
  CoordinatorOptions standby_options = Standby();
  standby_options.leases = StandbyLeases();
  auto standby = StartCoordinator(context, standby_options);
  ASSERT_TRUE(standby) << standby.error();
  std::vector<JoinResult> clients =
      JoinJob(context, primary, standby_options.counters->control_endpoint);
  const std::vector<int> all = {0, 1, 2, 3};
  int64_t next = 0;
  for (int host : {2, 3, 1, 0}) {
    (*clients[host])->RequestLease({1, -1});
    EXPECT_EQ(AwaitGrant(clients, host, all).chunk, next++) << host;
  }
  (*clients[2])->ReportListing({1, {0}});
  ASSERT_TRUE(AwaitAck(**clients[2]));
  (*clients[2])->ReportListed({{0}});
  (*clients[3])->ReportListing({1, {1}});
  ASSERT_TRUE(AwaitAck(**clients[3]));

  host0.Kill();
  (*clients[3])->ReportListed({{1}});  // lost with host 0: the reattach says it
  const std::vector<int> others = {1, 2, 3};
  EXPECT_TRUE(AwaitTakeover(clients, others, *standby_options.counters));
  (*clients[2])->RequestLease({2, -1});
  EXPECT_EQ(AwaitGrant(clients, 2, others).chunk, 3) << "host 0's unlisted chunk";
  (*clients[1])->RequestLease({2, -1});
  EXPECT_EQ(AwaitGrant(clients, 1, others).chunk, 4);
  for (int host : others) EXPECT_TRUE((*clients[host])->Service()) << host;
  // A host that did not reattach comes too late to do so, and the job goes on.
  const std::string& endpoint = standby_options.counters->control_endpoint;
  EXPECT_NE(AbortFor(context, endpoint, ReattachMessage{2, {}, {}})
                .find("after it took over the job without it"),
            std::string::npos);
  for (int host : others) EXPECT_TRUE((*clients[host])->Service()) << host;

  auto copy = ReadWholeFile(standby_log);
  ASSERT_TRUE(copy) << copy.error();
  for (const char* record : {"listed 0 host-2", "listed 1 host-3", "lost host-0",
                             "granted 3 host-2", "granted 4 host-1"}) {
    EXPECT_NE(copy->find(record), std::string::npos) << record << " in\n" << *copy;
  }
}

// After a takeover, a node that comes (host 0's command again, on a new machine, or
// an added host) finds the job at the standby's address, host 0's being dead: the
// standby admits it as host 0's rendezvous would, and it takes leases; a node whose
// settings differ from host 0's is refused, naming the flag.
TEST_F(StandbyCoordinatorTest, AfterATakeoverANodeThatComesJoinsThroughTheStandby) {
  CoordinatorOptions primary = Primary();
  primary.max_hosts = kHosts + 1;
  ForkedCoordinator host0(primary, [&] { return PrimaryLeases(); });
  zmq::context_t context;
  CoordinatorOptions standby_options = Standby();
  standby_options.max_hosts = 0;  // host 1 was not given --max-hosts: host 0's counts
  standby_options.leases = StandbyLeases();
  auto standby = StartCoordinator(context, standby_options);
  ASSERT_TRUE(standby) << standby.error();
  const std::string& endpoint = standby_options.counters->control_endpoint;
  std::vector<JoinResult> clients = JoinJob(context, primary, endpoint);
  (*clients[0])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 0, {0, 1, 2, 3}).chunk, 0);

  host0.Kill();
  const std::vector<int> others = {1, 2, 3};
  ASSERT_TRUE(AwaitTakeover(clients, others, *standby_options.counters));
  CoordinatorClientOptions late = ClientOptionsFor(primary);
  late.standby_endpoint = endpoint;
  std::atomic<bool> joining = true;
  std::thread serve_others([&] {
    while (joining) {
      for (int host : others) (void)(*clients[host])->Service();
      std::this_thread::sleep_for(20ms);
    }
  });
  auto back = CoordinatorClient::Join(context, late, MakeHello(0, kHosts));
  joining = false;
  serve_others.join();
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE((*back)->with_standby());
  clients[0] = std::move(back);
  (*clients[0])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 0, {0, 1, 2, 3}).chunk, 0) << "host 0's unlisted chunk";

  // An added host (host 0's --max-hosts) joins the same way.
  auto added = CoordinatorClient::Join(context, late, MakeHello(kHosts, kHosts));
  ASSERT_TRUE(added) << added.error();
  EXPECT_TRUE((*added)->with_standby());
  HelloMessage other = MakeHello(2, kHosts);
  other.fingerprint["--layers"] = "7";
  auto refused = CoordinatorClient::Join(context, late, other);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), "host 2: --layers differs: host 0 has 20,21 but host 2 has 7");
  for (int host : {0, 1, 2, 3}) EXPECT_TRUE((*clients[host])->Service()) << host;
}

// A standby on ports the kernel picks still has its monitor ports right after its
// control port, and host 0 names its feed to the monitors: one that follows the name
// hears what the nodes publish to the standby (the control port + 2), as it will
// after a takeover.
TEST_F(StandbyCoordinatorTest, Host0NamesTheStandbysFeedWhichFollowsItsControlPort) {
  zmq::context_t context;
  CoordinatorOptions standby_options = Standby();
  standby_options.leases = StandbyLeases();
  auto standby = StartCoordinator(context, standby_options);
  ASSERT_TRUE(standby) << standby.error();
  const std::string control = standby_options.counters->control_endpoint;
  CoordinatorOptions primary = Primary();
  primary.leases = PrimaryLeases();
  auto host0 = StartCoordinator(context, primary);
  ASSERT_TRUE(host0) << host0.error();
  std::optional<zmq::socket_t> monitor = SubscribedMonitor(context, primary);
  ASSERT_TRUE(monitor);
  std::vector<JoinResult> clients = JoinJob(context, primary, control);

  const std::string feed = CoordinatorPortEndpoint(control, kMonitorPortOffset);
  std::vector<MonitorEventMessage> named;
  EXPECT_TRUE(WaitUntil([&] {
    for (const auto& event : Collect(*monitor, 20ms)) {
      if (event.kind == kStandbyEventKind) named.push_back(event);
    }
    return !named.empty();
  })) << "no \"standby\" event from host 0";
  ASSERT_FALSE(named.empty());
  EXPECT_EQ(named.front().host_id, kStandbyHost);
  EXPECT_EQ(named.front().message, feed);
  EXPECT_EQ(named.front().num_hosts, kHosts);

  zmq::socket_t follower(context, zmq::socket_type::sub);
  follower.set(zmq::sockopt::linger, 0);
  follower.set(zmq::sockopt::subscribe, "");
  follower.connect(feed);
  zmq::socket_t node(context, zmq::socket_type::pub);
  node.set(zmq::sockopt::linger, 0);
  node.connect(CoordinatorPortEndpoint(control, kEventsPortOffset));
  MonitorEventMessage progress;
  progress.kind = "progress";
  progress.host_id = 2;
  EXPECT_TRUE(WaitUntil([&] {
    EXPECT_TRUE(Send(node, progress).has_value());
    return !Collect(follower, 20ms).empty();
  })) << "nothing came through the standby's feed at "
      << feed;

  // A monitor that attaches later is told when its subscription arrives.
  zmq::socket_t later = coordinator_test::Monitor(context, primary);
  EXPECT_TRUE(WaitUntil([&] {
    for (const auto& event : Collect(later, 20ms)) {
      if (event.kind == kStandbyEventKind && event.message == feed) return true;
    }
    return false;
  }));
}

// The standby lost (killed) while every host still hears host 0: host 0's
// coordinator goes on without one once the link's connection has been closed for
// the disconnect grace (long before the heartbeat timeout), and holds no answer back
// any more.
TEST_F(StandbyCoordinatorTest, Host0GoesOnWithoutALostStandbyWhileMostHostsHearIt) {
  ASSERT_NO_FATAL_FAILURE(StartAndGrantHost2AChunk(20s, 500ms));
  const std::vector<int> all = {0, 1, 2, 3};

  standby->Kill();
  (*clients[3])->RequestLease({1, -1});
  // Held until the standby is found lost (0.5 s), then answered.
  EXPECT_EQ(AwaitGrant(clients, 3, all, 5000ms).chunk, 1);
  for (int host : all) EXPECT_TRUE((*clients[host])->Service()) << host;
}

// A worker whose process died (its connection closed) just before the standby was
// lost is no host the standby could have taken over with: host 0 still hears most of
// the hosts left (itself and host 2 of hosts 0-2), so it goes on without a standby.
// Counted as in the job, host 3 would have made that two of four, and host 0 would
// have ended a job nothing had split.
TEST_F(StandbyCoordinatorTest, AHostWhoseProcessEndedJustBeforeTheStandbyIsLostCountsForNoSide) {
  ASSERT_NO_FATAL_FAILURE(StartAndGrantHost2AChunk(20s, 500ms));
  const std::vector<int> left = {0, 1, 2};
  // Host 0's coordinator tells its monitors when it finds host 3 lost.
  std::optional<zmq::socket_t> monitor = SubscribedMonitor(*context, primary);
  ASSERT_TRUE(monitor);
  clients[3]->reset();  // host 3's process dies
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (int host : left) (void)(*clients[host])->Service();
        return std::ranges::any_of(Collect(*monitor, 20ms), [](const MonitorEventMessage& event) {
          return event.kind == "lost" && event.host_id == 3;
        });
      },
      5000ms));

  standby->Kill();
  (*clients[2])->RequestLease({1, -1});
  // Held until the standby is found lost (0.5 s), then answered.
  EXPECT_EQ(AwaitGrant(clients, 2, left, 5000ms).chunk, 1);
  for (int host : left) EXPECT_TRUE((*clients[host])->Service()) << host;
}

// The standby killed and its host's command started again at once with the same
// --standby-coordinator address: the new standby binds the same port, so host 0's link
// reconnects and the old standby is never found lost, but its copy starts afresh and
// no update from where the old one stopped fits it. Host 0 sees it hold fewer records
// than were confirmed and sends it the whole log, so an answer held for the standby
// (a draining host's listing or lease, which waited here for the standby's host to be
// found lost and rejoin: up to the whole --drain-timeout) goes out once the new
// standby holds it. The timeouts are a minute away: nothing else releases it.
TEST_F(StandbyCoordinatorTest, ARestartedStandbyAtTheSameAddressGetsTheWholeLogAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartAndGrantHost2AChunk(60s, 60s));
  const std::vector<int> all = {0, 1, 2, 3};

  const std::string endpoint = standby->endpoint();
  standby->Kill();
  CoordinatorOptions restarted = Standby();
  restarted.port = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
  restarted.leases = StandbyLeases();  // the same file, started afresh
  auto again = StartCoordinator(*context, restarted);
  ASSERT_TRUE(again) << again.error();
  ASSERT_EQ(restarted.counters->control_endpoint, endpoint);
  (*clients[3])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 3, all, 20000ms).chunk, 1);
  auto copy = ReadWholeFile(standby_log);
  ASSERT_TRUE(copy) << copy.error();
  for (const char* record : {"granted 0 host-2", "granted 1 host-3"}) {
    EXPECT_NE(copy->find(record), std::string::npos) << record << " in\n" << *copy;
  }
}

// The standby lost while only host 0 and the standby's host still answer: host 0
// may be the lesser side of a split network, and the standby may have taken over
// with the rest, so host 0's coordinator ends the job rather than answer.
TEST_F(StandbyCoordinatorTest, Host0EndsTheJobWhenItLosesTheStandbyAndMostHosts) {
  StartWithAForkedStandby();
  (*clients[0])->RequestLease({1, -1});
  EXPECT_EQ(AwaitGrant(clients, 0, {0, 1, 2, 3}).chunk, 0);

  standby->Kill();  // and hosts 2 and 3 fall silent
  (*clients[0])->RequestLease({2, -1});
  std::expected<void, std::string> ended;
  EXPECT_TRUE(WaitUntil(
      [&] {
        (void)(*clients[1])->Service();
        ended = (*clients[0])->Service();
        EXPECT_TRUE((*clients[0])->TakeGrants().empty()) << "answered without its standby";
        return !ended.has_value();
      },
      5000ms));
  ASSERT_FALSE(ended.has_value());
  EXPECT_NE(ended.error().find("the standby may have taken over the job"), std::string::npos)
      << ended.error();
}

// Before any takeover the standby answers only host 0: a Reattach of a host it does
// not know, or of one host 0 no longer counts, is refused, a Hello is left unanswered, and a second
// peer's StandbyUpdate is dropped and counted.
TEST_F(StandbyCoordinatorTest, BeforeATakeoverTheStandbyAnswersOnlyHost0) {
  liveness.heartbeat_timeout = liveness.disconnect_grace = 20s;  // no takeover meanwhile
  zmq::context_t context;
  CoordinatorOptions options = Standby();
  options.leases = StandbyLeases();
  auto standby = StartCoordinator(context, options);
  ASSERT_TRUE(standby) << standby.error();
  const std::string& endpoint = options.counters->control_endpoint;
  zmq::socket_t first(context, zmq::socket_type::dealer);
  first.set(zmq::sockopt::linger, 0);
  first.connect(endpoint);
  ASSERT_TRUE(Send(first, Update(0, "granted 0 host-2", {0, 1, 2, 3})));
  auto confirm = Receive(first, 3000ms);
  ASSERT_TRUE(confirm && *confirm) << "no StandbyConfirm";
  EXPECT_EQ((*confirm)->As<StandbyConfirmMessage>()->records, 1u);

  EXPECT_NE(AbortFor(context, endpoint, ReattachMessage{7, {}, {}})
                .find("does not know it as a host of the job"),
            std::string::npos);
  // A host that host 0 found lost (cut off past the timeout) is told so.
  ASSERT_TRUE(Send(first, Update(1, "granted 1 host-3", {0, 1, 3})));
  auto second = Receive(first, 3000ms);
  ASSERT_TRUE(second && *second) << "no StandbyConfirm";
  EXPECT_NE(AbortFor(context, endpoint, ReattachMessage{2, {}, {}})
                .find("host 0's coordinator still runs the job and no longer counts host 2 in it"),
            std::string::npos);
  // A node that comes is host 0's while host 0 runs the job: no answer here.
  EXPECT_EQ(AbortFor(context, endpoint, MakeHello(2, kHosts)), "");
  EXPECT_EQ(AbortFor(context, endpoint, Update(2, "granted 2 host-3", {0})), "");
  EXPECT_GE(options.counters->unexpected_messages.load(), 1u);
  EXPECT_FALSE(options.counters->took_over.load());
}

}  // namespace
}  // namespace actex
