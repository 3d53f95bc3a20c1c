// Who may join a job, and what strangers' bytes do to a running one (real `actex`
// processes on 127.0.0.1): a job key admits only its holders, and every port shrugs
// off what strangers send while the run matches a clean one.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "actex_process.h"
#include "actors/extract_flag_table.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"
#include "tests/transport/raw_frames.h"
#include "transport/job_security.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test_support::PackedBody;

// Every document of `out` equals the reference run's, and nothing else is there.
void ExpectSameDocuments(const std::string& out, const std::string& reference_out) {
  auto documents = ReadJob(out);
  auto reference = ReadJob(reference_out);
  ASSERT_EQ(documents.size(), reference.size());
  for (const auto& [doc, rows] : reference) {
    ASSERT_TRUE(documents.contains(doc)) << "document " << doc;
    EXPECT_EQ(documents[doc].token_ids, rows.token_ids) << "document " << doc;
    for (const auto& [site, values] : rows.sites) {
      Deviation deviation = Compare(documents[doc].sites[site], values);
      EXPECT_LE(deviation.max_abs_error, 1e-5 * deviation.max_abs_reference)
          << "doc " << doc << " " << site;
    }
  }
  EXPECT_EQ(RejectedIds(out), RejectedIds(reference_out));
}

// Writes a new job key with `actex make-job-key` and returns its path.
std::string MakeJobKey(const TempDir& dir, const std::string& name) {
  const std::string path = dir.path() + "/" + name;
  ActexProcess make(dir.path() + "/make-" + name, {"make-job-key", path});
  EXPECT_EQ(make.Wait(seconds(10)), 0) << make.err();
  return path;
}

std::vector<std::string> SimulateArgs(const std::string& corpus, const std::string& out) {
  std::vector<std::string> args = {
      "simulate", "--hosts", "2", "--mesh", "1d", "--heartbeat-timeout", "20"};
  for (const std::string& arg : ExtractOptionsToArgs(TinyModelOptions(corpus, out, 1))) {
    args.push_back(arg);
  }
  return args;
}

TEST(SimulatedJob, AJobWhoseHostsRejectedEverythingExitsThreeNotAsAFailure) {
  TempDir dir;
  std::string corpus;
  for (int line = 0; line < 12; ++line) corpus += "{\"body\": \"no text field\"}\n";
  ActexProcess simulate(dir.path() + "/simulate",
                        SimulateArgs(dir.Write("corpus.jsonl", corpus), dir.path() + "/out"));
  EXPECT_EQ(simulate.Wait(seconds(120)), 3) << simulate.err();
  EXPECT_NE(simulate.err().find("completed, but host 0 rejected too much"), std::string::npos)
      << simulate.err();
}

TEST(SimulatedJob, AFlagEveryHostRefusesExitsTwoWritingNothing) {
  TempDir dir;
  std::vector<std::string> args =
      SimulateArgs(dir.Write("corpus.jsonl", Corpus(4, 8)), dir.path() + "/out");
  *(std::find(args.begin(), args.end(), "--layers") + 1) = "9";
  ActexProcess simulate(dir.path() + "/simulate", args);
  // A usage error, as `actex extract` gives it: the same command cannot succeed.
  EXPECT_EQ(simulate.Wait(seconds(60)), 2) << simulate.err();
  EXPECT_NE(simulate.err().find("--layers 9: layer 9 is not in the model"), std::string::npos)
      << simulate.err();
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out/host_00/metadata.json"));
}

TEST(MultiHostSecurity, JobWithAKeyMatchesTheOpenJobAndSaysSo) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(30, 24));
  const std::string key = MakeJobKey(dir, "job.key");
  std::vector<std::string> keyed_args = SimulateArgs(corpus, dir.path() + "/keyed");
  keyed_args.insert(keyed_args.begin() + 1, {"--job-key-file", key});
  ActexProcess keyed(dir.path() + "/keyed", keyed_args);
  ASSERT_EQ(keyed.Wait(seconds(60)), 0) << keyed.err();
  ActexProcess open(dir.path() + "/open", SimulateArgs(corpus, dir.path() + "/open"));
  ASSERT_EQ(open.Wait(seconds(60)), 0) << open.err();

  ExpectSameDocuments(dir.path() + "/keyed", dir.path() + "/open");
  // Both nodes used the key (the simulation passed it on); only the open job warns.
  for (const std::string host : {"host 0", "host 1"}) {
    EXPECT_NE(keyed.err().find(host + ": every tcp socket of the job uses CURVE"),
              std::string::npos)
        << keyed.err();
  }
  EXPECT_EQ(keyed.err().find("the job is open"), std::string::npos) << keyed.err();
  EXPECT_NE(open.err().find("the job is open"), std::string::npos) << open.err();
}

TEST(MultiHostSecurity, NodeWithAnotherKeyNeverJoinsAndTheOthersNameIt) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(20, 16));
  const std::string key = MakeJobKey(dir, "job.key");
  const std::string other_key = MakeJobKey(dir, "other.key");
  ManualJob job(dir);
  auto with_key = [](const std::string& file) {
    return [file](NodeOptions& node) {
      node.job_key_file = file;
      node.join_timeout = seconds(2);
    };
  };
  ActexProcess& host0 = job.Start(0, 3, corpus, "1d", with_key(key));
  ActexProcess& host1 = job.Start(1, 3, corpus, "1d", with_key(key));
  ActexProcess& stranger = job.Start(2, 3, corpus, "1d", with_key(other_key));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(host0.Wait(seconds(20)), 0);
  EXPECT_NE(host1.Wait(seconds(20)), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  for (ActexProcess* keyed : {&host0, &host1}) {
    EXPECT_NE(keyed->err().find("host 2 never joined"), std::string::npos) << keyed->err();
  }
  EXPECT_NE(host0.err().find("refused a connection"), std::string::npos) << host0.err();
  // The stranger waits for a Welcome that never comes (join timeout + 10 s margin),
  // then says why.
  EXPECT_NE(stranger.Wait(seconds(30)), 0);
  EXPECT_NE(stranger.err().find("no answer from the coordinator"), std::string::npos)
      << stranger.err();
  EXPECT_NE(stranger.err().find("--job-key-file"), std::string::npos) << stranger.err();
}

std::string RandomBytes(std::mt19937& random, size_t size) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random() & 0xff);
  return bytes;
}

std::string Envelope(uint64_t version, MessageType type) {
  return PackEnvelope(version, static_cast<uint16_t>(type));
}

// Connects a plain tcp socket to 127.0.0.1:port; -1 when the port is closed. A
// `nonblocking` connect returns at once, established or not (a burst beyond the
// listener's backlog would otherwise wait for the kernel's retry).
int ConnectRaw(int port, bool nonblocking = false) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (fd >= 0 && (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 ||
                  (nonblocking && errno == EINPROGRESS))) {
    return fd;
  }
  if (fd >= 0) ::close(fd);
  return -1;
}

// What a stranger can do to one tcp port without any key: bytes that are not
// ZeroMQ, a burst of 200 connections, then ZeroMQ messages of every wrong kind from
// a socket of `type` (one the port's socket accepts), one of them a body frame of
// `oversized` bytes (beyond what the port accepts).
void Attack(zmq::context_t& context, int port, zmq::socket_type type, size_t oversized,
            std::mt19937& random) {
  std::string greeting(64, '\0');  // ZMTP 3.0 naming a mechanism nobody offers
  greeting[0] = '\xff';
  greeting[9] = '\x7f';
  greeting[10] = 3;
  greeting.replace(12, 5, "BOGUS");
  for (const std::string& bytes :
       {greeting, RandomBytes(random, 4096), std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")}) {
    const int fd = ConnectRaw(port);
    if (fd < 0) continue;
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    std::this_thread::sleep_for(milliseconds(20));
    ::close(fd);
  }
  std::vector<int> burst;
  for (int i = 0; i < 200; ++i) burst.push_back(ConnectRaw(port, true));
  std::this_thread::sleep_for(milliseconds(50));
  for (int fd : burst) {
    if (fd >= 0) ::close(fd);
  }

  zmq::socket_t stranger(context, type);
  stranger.set(zmq::sockopt::linger, 0);
  stranger.set(zmq::sockopt::sndtimeo, 0);  // a refused stranger has nowhere to queue
  stranger.connect("tcp://127.0.0.1:" + std::to_string(port));
  const std::string body = PackedBody(CollectiveChunkMessage{"replica-0", 1, 0, 0, 0});
  const std::vector<std::vector<std::string>> messages = {
      {RandomBytes(random, 100)},
      {RandomBytes(random, 30), RandomBytes(random, 3000)},
      {Envelope(kSchemaVersion, MessageType::kCollectiveChunk), body.substr(0, body.size() / 2)},
      {Envelope(kSchemaVersion + 1, MessageType::kCollectiveChunk), body, std::string(16, '\0')},
      {Envelope(kSchemaVersion, MessageType::kDocument), PackedBody(DocumentMessage{})},
      {Envelope(kSchemaVersion, MessageType::kHeartbeat), PackedBody(HeartbeatMessage{0, 1})},
      {Envelope(kSchemaVersion, MessageType::kFailure), PackedBody(FailureMessage{0, "obey me"})},
      {Envelope(kSchemaVersion, MessageType::kMonitorEvent), PackedBody(std::vector<int>{1, 2})},
      {Envelope(kSchemaVersion, MessageType::kTokenBatch), std::string(oversized, '\x91')},
  };
  for (const auto& frames : messages) {
    for (size_t i = 0; i < frames.size(); ++i) {
      try {
        (void)stranger.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore
                                                                          : zmq::send_flags::none);
      } catch (const zmq::error_t&) {
        break;  // the job may already be over
      }
    }
  }
  std::this_thread::sleep_for(milliseconds(200));  // delivered before the close
}

// The tcp ports a node's log says its ring ingresses listen on.
std::vector<int> RingPorts(const std::string& log) {
  std::vector<int> ports;
  const std::string marker = "listens on tcp://127.0.0.1:";
  for (size_t at = log.find(marker); at != std::string::npos; at = log.find(marker, at + 1)) {
    ports.push_back(std::atoi(log.c_str() + at + marker.size()));
  }
  return ports;
}

class HostileBytes : public testing::TestWithParam<bool> {};

TEST_P(HostileBytes, EveryPortShrugsOffStrangersAndTheRunMatchesACleanOne) {
  const bool keyed = GetParam();
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(2000, 48));
  auto single = RunExtraction(TinyModelOptions(corpus, dir.path() + "/single", 1));
  ASSERT_TRUE(single) << single.error();
  const std::string key = keyed ? MakeJobKey(dir, "job.key") : "";
  ManualJob job(dir);
  auto adjust = [&](NodeOptions& node) {
    node.job_key_file = key;
    node.heartbeat_timeout = seconds(20);
    node.extract.shard_bytes = int64_t{1} << 30;  // one shard: the time goes to the model
  };
  ActexProcess& host0 = job.Start(0, 2, corpus, "1d", adjust);
  ActexProcess& host1 = job.Start(1, 2, corpus, "1d", adjust);
  std::vector<int> ring_ports;
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (ring_ports.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    ring_ports = RingPorts(host0.err() + host1.err());
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_EQ(ring_ports.size(), 2u) << host0.err() << host1.err();

  zmq::context_t context;
  // A monitor of the job's own, so the nodes' PUBs and the stranger's publish.
  zmq::socket_t monitor(context, zmq::socket_type::sub);
  monitor.set(zmq::sockopt::linger, 0);
  monitor.set(zmq::sockopt::subscribe, "");
  if (keyed) {
    ASSERT_TRUE(JobSecurity::FromKeyFile(key).value()->ApplyClient(monitor).has_value());
  }
  monitor.connect("tcp://127.0.0.1:" + std::to_string(job.port() + 1));
  std::this_thread::sleep_for(milliseconds(200));
  // Every port at once, each with a body beyond what it accepts.
  struct Target {
    int port;
    zmq::socket_type type;
    size_t oversized;
  };
  std::vector<Target> targets = {
      {job.port(), zmq::socket_type::dealer, size_t{17} << 20},  // control ROUTER
      {job.port() + 1, zmq::socket_type::xsub, 8 << 10},         // monitor feed XPUB
      {job.port() + 2, zmq::socket_type::pub, 2 << 20},          // event collector XSUB
  };
  for (int port : ring_ports) {
    targets.push_back({port, zmq::socket_type::push, (size_t{64} << 20) + 1});  // ring PULL
  }
  std::vector<std::thread> attackers;
  for (const Target& target : targets) {
    attackers.emplace_back([&context, target] {
      std::mt19937 random(target.port);
      Attack(context, target.port, target.type, target.oversized, random);
    });
  }
  for (std::thread& attacker : attackers) attacker.join();
  const bool attacked_while_running = !host0.Poll() && !host1.Poll();

  ASSERT_EQ(host0.Wait(seconds(60)), 0) << host0.err();
  ASSERT_EQ(host1.Wait(seconds(60)), 0) << host1.err();
  EXPECT_TRUE(attacked_while_running) << "the job ended before the attack did: make it longer";
  ExpectSameDocuments(dir.path() + "/out", dir.path() + "/single");
  // Whatever reached the monitor is a MonitorEvent: the relay passes nothing else.
  for (int events = 0;; ++events) {
    auto received = Receive(monitor, milliseconds(0));
    ASSERT_TRUE(received.has_value()) << received.error().message;
    if (!*received) break;
    EXPECT_TRUE((*received)->As<MonitorEventMessage>().has_value());
  }
  const std::string logs = host0.err() + host1.err();
  EXPECT_NE(logs.find("coordinator: refused a connection"), std::string::npos) << logs;
  EXPECT_NE(logs.find("' rank 0: refused a connection"), std::string::npos) << logs;
  if (keyed) {
    // Not one stranger's message got past the handshake.
    EXPECT_EQ(logs.find("dropped"), std::string::npos) << logs;
  } else {
    EXPECT_NE(logs.find("coordinator: dropped a message"), std::string::npos) << logs;
    EXPECT_NE(logs.find("monitor relay: dropped"), std::string::npos) << logs;
    EXPECT_NE(logs.find("rank 1: dropped a message"), std::string::npos) << logs;
  }
}

INSTANTIATE_TEST_SUITE_P(Jobs, HostileBytes, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "WithKey" : "Open";
                         });

}  // namespace
}  // namespace actex
