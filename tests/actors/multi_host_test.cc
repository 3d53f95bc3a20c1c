// Jobs of several hosts as real `actex` processes talking tcp on 127.0.0.1: the
// same numbers as one process, every document exactly once, and every failure
// (a host with other settings, one that never starts, one killed mid-run) ending
// every other host with the cause named, while listed shards stay readable, except
// where no collective crosses hosts (2d): there a lost worker ends only its share.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "actex_process.h"
#include "actors/cli/local_cluster.h"
#include "actors/extract_flag_table.h"
#include "actors/extraction_summary.h"
#include "actors/mesh_plan.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"
#include "transport/job_security.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct JobShape {
  std::string name;
  int hosts, shards_per_host;
  std::string mesh;
  friend void PrintTo(const JobShape& shape, std::ostream* os) { *os << shape.name; }
};

class SimulatedJob : public testing::TestWithParam<JobShape> {};

TEST_P(SimulatedJob, MatchesOneProcessAndWritesEveryDocumentOnce) {
  const JobShape& shape = GetParam();
  TempDir dir;
  const int documents = 40;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(documents, 24));
  auto single = RunExtraction(TinyModelOptions(corpus, dir.path() + "/single", 1));
  ASSERT_TRUE(single) << single.error();
  auto reference = ReadJob(dir.path() + "/single");

  const std::string out = dir.path() + "/simulated";
  std::vector<std::string> args = {"simulate", "--hosts",  std::to_string(shape.hosts),
                                   "--mesh",   shape.mesh, "--heartbeat-timeout",
                                   "20"};
  for (const std::string& arg :
       ExtractOptionsToArgs(TinyModelOptions(corpus, out, shape.shards_per_host))) {
    args.push_back(arg);
  }
  ActexProcess simulate(dir.path() + "/simulate", args);
  ASSERT_EQ(simulate.Wait(seconds(120)), 0) << simulate.err();

  auto simulated = ReadJob(out);
  std::multiset<int64_t> rejected = RejectedIds(out);
  for (int64_t doc = 0; doc < documents; ++doc) {
    EXPECT_NE(simulated.contains(doc), rejected.contains(doc))
        << "document " << doc << " must be written or rejected, exactly once";
    EXPECT_LE(rejected.count(doc), 1u) << "document " << doc << " listed as rejected twice";
  }
  EXPECT_EQ(rejected, RejectedIds(dir.path() + "/single"));
  ASSERT_EQ(simulated.size(), reference.size());
  // Replicas of one shard, like the reference, form its batches (a batch never crosses
  // a chunk), so they give its bits; shards of a replica sum in another order.
  auto mesh = PlanMesh(shape.mesh, shape.hosts, shape.shards_per_host, 0, 1, 3);
  ASSERT_TRUE(mesh) << mesh.error();
  for (const auto& [doc, rows] : reference) {
    EXPECT_EQ(simulated[doc].token_ids, rows.token_ids);
    for (const auto& [site, values] : rows.sites) {
      if (mesh->model == 1) {
        EXPECT_EQ(simulated[doc].sites[site], values)
            << shape.name << " doc " << doc << " " << site;
        continue;
      }
      Deviation deviation = Compare(simulated[doc].sites[site], values);
      EXPECT_LE(deviation.max_abs_error, 1e-5 * deviation.max_abs_reference)
          << shape.name << " doc " << doc << " " << site;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, SimulatedJob,
    testing::Values(JobShape{"TwoHosts1d", 2, 1, "1d"}, JobShape{"TwoHosts2d", 2, 2, "2d"},
                    JobShape{"TwoHostsTwoShards1d", 2, 2, "1d"},
                    JobShape{"ThreeHosts1d", 3, 1, "1d"}, JobShape{"ThreeHosts2d", 3, 1, "2d"},
                    JobShape{"ThreeHostsData2Model3", 3, 2, "data=2,model=3"}),
    [](const testing::TestParamInfo<JobShape>& info) { return info.param.name; });

TEST(MultiHostFailures, HostWithDifferentLayersEndsEveryNodeNamingHostAndFlag) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(20, 16));
  ManualJob job(dir);
  ActexProcess& host0 = job.Start(0, 2, corpus);
  ActexProcess& host1 =
      job.Start(1, 2, corpus, "1d", [](NodeOptions& node) { node.extract.layers = {0}; });
  EXPECT_NE(host0.Wait(seconds(30)), 0);
  EXPECT_NE(host1.Wait(seconds(30)), 0);
  for (ActexProcess* node : {&host0, &host1}) {
    EXPECT_NE(node->err().find("host 1"), std::string::npos) << node->err();
    EXPECT_NE(node->err().find("--layers"), std::string::npos) << node->err();
  }
}

TEST(MultiHostFailures, HostThatNeverStartsIsNamedAtTheJoinDeadline) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(20, 16));
  ManualJob job(dir);
  auto short_wait = [](NodeOptions& node) { node.join_timeout = seconds(2); };
  ActexProcess& host0 = job.Start(0, 3, corpus, "1d", short_wait);
  ActexProcess& host1 = job.Start(1, 3, corpus, "1d", short_wait);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(host0.Wait(seconds(30)), 0);
  EXPECT_NE(host1.Wait(seconds(30)), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(15));
  EXPECT_NE(host0.err().find("host 2"), std::string::npos) << host0.err();
  EXPECT_NE(host1.err().find("host 2"), std::string::npos) << host1.err();
}

// Every shard listed anywhere under OUT reads back whole, with its listed size.
void ExpectListedShardsComplete(const std::string& out) {
  for (const auto& entry : fs::directory_iterator(out)) {
    if (!entry.is_directory()) continue;  // OUT/.host_NN.lock
    std::ifstream file(entry.path() / "metadata.json");
    auto metadata = nlohmann::json::parse(file, nullptr, false);
    ASSERT_FALSE(metadata.is_discarded()) << entry.path();
    EXPECT_FALSE(metadata["complete"].get<bool>());
    for (const auto& shard : metadata["shards"]) {
      fs::path path = entry.path() / shard["file"].get<std::string>();
      EXPECT_EQ(fs::file_size(path), shard["bytes"].get<uint64_t>()) << path;
    }
    ReadHostFolder(entry.path().string());  // fails the test on an unreadable shard
  }
}

struct KillCase {
  std::string name;
  int killed;
  std::string mesh;
  friend void PrintTo(const KillCase& kill, std::ostream* os) { *os << kill.name; }
};

class KilledHost : public testing::TestWithParam<KillCase> {};

TEST_P(KilledHost, EndsTheOtherNodeWithinTheHeartbeatTimeout) {
  const KillCase& kill_case = GetParam();
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(6000, 48));
  ManualJob job(dir);
  ActexProcess& host0 = job.Start(0, 2, corpus, kill_case.mesh);
  ActexProcess& host1 = job.Start(1, 2, corpus, kill_case.mesh);
  ASSERT_TRUE(WaitForFirstShard(dir.path() + "/out/host_00", seconds(60))) << host0.err();
  ActexProcess& victim = kill_case.killed == 0 ? host0 : host1;
  ActexProcess& survivor = kill_case.killed == 0 ? host1 : host0;
  victim.Signal(SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  EXPECT_NE(survivor.Wait(seconds(30)), 0);
  // Heartbeat timeout 3 s, plus the time to stop and flush.
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, seconds(10));
  EXPECT_NE(survivor.err().find("host " + std::to_string(kill_case.killed)), std::string::npos)
      << survivor.err();
  ExpectListedShardsComplete(dir.path() + "/out");
}

INSTANTIATE_TEST_SUITE_P(Kill9, KilledHost,
                         testing::Values(KillCase{"WorkerIn1dMesh", 1, "1d"},
                                         KillCase{"CoordinatorIn2dMesh", 0, "2d"}),
                         [](const testing::TestParamInfo<KillCase>& info) {
                           return info.param.name;
                         });

struct ReplicaLoss {
  std::string name;
  int signal;  // sent to host 3
  friend void PrintTo(const ReplicaLoss& loss, std::ostream* os) { *os << loss.name; }
};

class LostReplica : public testing::TestWithParam<ReplicaLoss> {};

// Replicas that span hosts (data=2,model=2 over 4 hosts: hosts 0-1 and 2-3) lease
// chunks too: host 2 asks, host 3 follows its grants. Host 3 killed, or signalled (it
// cannot drain its replica's batches alone, so it stops where it is), stops host 2,
// naming it, and the other replica takes over their unlisted chunks and finishes the
// job, equal to an uninterrupted job of the same mesh to the bit.
TEST_P(LostReplica, ItsOtherHostStopsAndTheOtherReplicaFinishesTheJob) {
  constexpr int kHosts = 4;
  const std::string mesh = "data=2,model=2";
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(3000, 48));
  struct Ended {
    int status;
    std::string log;
  };
  auto run = [&](const std::string& out,
                 const std::function<void(std::vector<ActexProcess*>&)>& during) {
    ManualJob job(dir);
    std::vector<ActexProcess*> nodes =
        job.StartAll(kHosts, corpus, mesh, [&](NodeOptions& node) { node.extract.out_dir = out; });
    during(nodes);
    std::vector<Ended> ended;
    for (ActexProcess* node : nodes) ended.push_back({node->Wait(seconds(120)), node->err()});
    return ended;
  };
  auto all_succeeded = [](const std::vector<Ended>& hosts) {
    for (const Ended& host : hosts) EXPECT_EQ(host.status, 0) << host.log;
  };
  all_succeeded(run(dir.path() + "/clean", [](auto&) {}));

  const std::string out = dir.path() + "/out";
  const std::vector<Ended> hosts = run(out, [&](std::vector<ActexProcess*>& nodes) {
    ASSERT_TRUE(WaitForFirstShard(out + "/host_02", seconds(60))) << nodes[2]->err();
    nodes[3]->Signal(GetParam().signal);
  });
  EXPECT_EQ(hosts[1].status, 0) << hosts[1].log;
  if (GetParam().signal == SIGTERM) {
    EXPECT_EQ(hosts[3].status, kExitStoppedBySignal) << hosts[3].log;
    EXPECT_NE(hosts[3].log.find("the other replicas take over its replica's chunks"),
              std::string::npos)
        << hosts[3].log;
  }
  EXPECT_NE(hosts[2].status, 0);
  EXPECT_NE(hosts[2].log.find("host 2 stopped with its replica, which lost host 3"),
            std::string::npos)
      << hosts[2].log;
  // Killed while host 2 was listing, its chunks wait for host 2's folder: the same
  // commands then finish the job.
  const bool waited_for_a_folder =
      hosts[0].log.find("wait for host-2's folder") != std::string::npos;
  EXPECT_EQ(hosts[0].status, waited_for_a_folder ? 1 : 0) << hosts[0].log;
  EXPECT_NE(hosts[0].log.find("the job finished without 2 host(s)"), std::string::npos)
      << hosts[0].log;
  if (waited_for_a_folder) {
    std::printf("host 2 was stopped while listing: the same commands finish the job\n");
    all_succeeded(run(out, [](auto&) {}));
  }
  ExpectIdentical(out, dir.path() + "/clean");
  ExpectVerified(dir, out);
}

// Host 3 killed stops host 2 (they share a replica); both commands started again while
// the other replica runs bring the replica back: the two nodes join together, each
// learning the other's new ring ports, take leases, and the job completes with every
// host, equal to an uninterrupted job of the same mesh to the bit. (Host 2 runs the
// standby coordinator, which ends with it: host 0 goes on without one, counting the
// hosts just welcomed among those that hear it.)
TEST(LostReplicaReturns, BothItsCommandsAgainBringItBackAndTheJobCompletes) {
  constexpr int kHosts = 4;
  const std::string mesh = "data=2,model=2";
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(4800, 48));
  const std::string clean = dir.path() + "/clean";
  using WallClock = std::chrono::steady_clock;
  const auto SecondsSince = [](WallClock::time_point start) {
    return std::chrono::duration<double>(WallClock::now() - start).count();
  };
  auto started = WallClock::now();
  {
    ManualJob job(dir);
    for (ActexProcess* node : job.StartAll(
             kHosts, corpus, mesh, [&](NodeOptions& node) { node.extract.out_dir = clean; })) {
      EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
    }
  }
  const double uninterrupted = SecondsSince(started);
  const std::string out = dir.path() + "/out";
  started = WallClock::now();
  ManualJob job(dir);
  std::vector<ActexProcess*> nodes = job.StartAll(kHosts, corpus, mesh);
  ASSERT_TRUE(WaitForFirstShard(out + "/host_02", seconds(60))) << nodes[2]->err();
  nodes[3]->Signal(SIGKILL);
  EXPECT_NE(nodes[3]->Wait(seconds(10)), 0);
  EXPECT_NE(nodes[2]->Wait(seconds(30)), 0);
  EXPECT_NE(nodes[2]->err().find("host 2 stopped with its replica, which lost host 3"),
            std::string::npos)
      << nodes[2]->err();
  const size_t shards_when_stopped = ListedShards(out + "/host_02");
  ActexProcess& host3 = job.Start(3, kHosts, corpus, mesh);
  ActexProcess& host2 = job.Start(2, kHosts, corpus, mesh);
  for (ActexProcess* node : {nodes[0], nodes[1], &host2, &host3}) {
    EXPECT_EQ(node->Wait(seconds(120)), 0) << node->err();
  }
  const double with_return = SecondsSince(started);
  std::printf(
      "4 hosts, data=2,model=2, 4800 documents: uninterrupted %.2f s; host 3 killed, hosts 2-3 "
      "started again: %.2f s (%.2f x)\n",
      uninterrupted, with_return, with_return / uninterrupted);
  EXPECT_NE(nodes[0]->err().find("hosts 2, 3 come back together"), std::string::npos)
      << nodes[0]->err();
  ExpectListedMoreOnceBack(out + "/host_02", shards_when_stopped, "the replica of hosts 2-3");
  ExpectIdentical(out, clean);
  ExpectVerified(dir, out);
}

INSTANTIATE_TEST_SUITE_P(Losses, LostReplica,
                         testing::Values(ReplicaLoss{"Killed", SIGKILL},
                                         ReplicaLoss{"Signalled", SIGTERM}),
                         [](const testing::TestParamInfo<ReplicaLoss>& info) {
                           return info.param.name;
                         });

TEST(MultiHostMonitor, MonitorAttachedMidRunSeesEveryHost) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(3000, 48));
  ManualJob job(dir);
  // Larger shards than the kill tests need: fewer fsyncs, a shorter test.
  auto larger_shards = [](NodeOptions& node) { node.extract.shard_bytes = 256 << 10; };
  ActexProcess& host0 = job.Start(0, 2, corpus, "2d", larger_shards);
  ActexProcess& host1 = job.Start(1, 2, corpus, "2d", larger_shards);
  ASSERT_TRUE(WaitForFirstShard(dir.path() + "/out/host_00", seconds(60))) << host0.err();
  ActexProcess monitor(dir.path() + "/monitor",
                       {"monitor", "tcp://127.0.0.1:" + std::to_string(job.port() + 1), "--json",
                        "--timeout", "20"});
  std::set<int> hosts_seen;
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (hosts_seen.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::istringstream lines(monitor.out());
    for (std::string line; std::getline(lines, line);) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (event.is_discarded()) continue;
      hosts_seen.insert(event["host_id"].get<int>());
      // Every event names the job's size, so `--exit-when-finished` waits for both.
      EXPECT_EQ(event["num_hosts"], 2) << line;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(hosts_seen, (std::set<int>{0, 1})) << monitor.err();
  EXPECT_EQ(host0.Wait(seconds(120)), 0) << host0.err();
  EXPECT_EQ(host1.Wait(seconds(120)), 0) << host1.err();
  // In a leased job a host's share is whatever it is granted, so a host names the
  // job's total; what the hosts wrote or rejected adds up to the 3000 ids.
  std::map<int, nlohmann::json> finished;
  const auto finish_deadline = std::chrono::steady_clock::now() + seconds(10);
  while (finished.size() < 2 && std::chrono::steady_clock::now() < finish_deadline) {
    std::istringstream lines(monitor.out());
    for (std::string line; std::getline(lines, line);) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (event.is_discarded()) continue;
      if (event["docs_total"] != -1) {
        EXPECT_TRUE(event["docs_total_of_job"].get<bool>()) << line;
      }
      if (event["kind"] == "finished") finished[event["host_id"].get<int>()] = event;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_EQ(finished.size(), 2u) << monitor.out();
  int64_t answered = 0;  // written or rejected
  for (auto& [host, event] : finished) {
    answered += event["docs_done"].get<int64_t>() + event["rejected"].get<int64_t>();
  }
  EXPECT_EQ(answered, 3000) << monitor.out();
  // The monitor left without disturbing the run.
  monitor.Signal(SIGINT);
  EXPECT_EQ(monitor.Wait(seconds(10)), 0);
}

// ---- Who may join, and what strangers' bytes do to a running job ----

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

std::string Packed(const auto& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  return std::string(buffer.data(), buffer.size());
}

std::string Envelope(uint64_t version, MessageType type) {
  return Packed(std::map<std::string, uint64_t>{{"v", version}, {"t", uint64_t(type)}});
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
  const std::string body = Packed(CollectiveChunkMessage{"replica-0", 1, 0, 0, 0});
  const std::vector<std::vector<std::string>> messages = {
      {RandomBytes(random, 100)},
      {RandomBytes(random, 30), RandomBytes(random, 3000)},
      {Envelope(kSchemaVersion, MessageType::kCollectiveChunk), body.substr(0, body.size() / 2)},
      {Envelope(kSchemaVersion + 1, MessageType::kCollectiveChunk), body, std::string(16, '\0')},
      {Envelope(kSchemaVersion, MessageType::kDocument), Packed(DocumentMessage{})},
      {Envelope(kSchemaVersion, MessageType::kHeartbeat), Packed(HeartbeatMessage{0, 1})},
      {Envelope(kSchemaVersion, MessageType::kFailure), Packed(FailureMessage{0, "obey me"})},
      {Envelope(kSchemaVersion, MessageType::kMonitorEvent), Packed(std::vector<int>{1, 2})},
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
