#include "manual_job.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "actors/cli/local_cluster.h"
#include "coordination/lease_log.h"
#include "storage/host_folder_files.h"

namespace actex {

std::string Corpus(int documents, int length) {
  std::ostringstream corpus;
  for (int doc = 0; doc < documents; ++doc) {
    if (doc % 17 == 5) {
      corpus << "{\"input_ids\": [1, 2\n";  // not JSON: rejected, still uses its id
      continue;
    }
    std::vector<int> ids;
    for (int i = 0; i < length - doc % 5; ++i) ids.push_back((doc * 131 + i * 29) % 512);
    corpus << nlohmann::json{{"input_ids", ids}}.dump() << '\n';
  }
  return corpus.str();
}

ExtractOptions TinyModelOptions(const std::string& corpus, const std::string& out,
                                int shards_per_host) {
  ExtractOptions options;
  options.model_dir = ACTEX_FIXTURES_DIR "/qwen2-tiny";
  options.data = {corpus};
  options.out_dir = out;
  options.layers = {0, 1};
  options.sites = {"resid_post", "mlp_post"};
  options.shards = shards_per_host;
  options.dtype = "float32";
  options.batch_tokens = 96;
  options.chunk_docs = 3;
  options.blas_threads = 1;
  return options;
}

nlohmann::json Metadata(const std::string& host_dir) {
  std::ifstream file(host_dir + "/metadata.json");
  return nlohmann::json::parse(file, nullptr, false);
}

size_t ListedShards(const std::string& host_dir) {
  const nlohmann::json metadata = Metadata(host_dir);
  return metadata.is_object() ? metadata.value("shards", nlohmann::json::array()).size() : 0;
}

void ExpectListedMoreOnceBack(const std::string& host_dir, size_t before, const std::string& who) {
  const size_t shards = ListedShards(host_dir);
  EXPECT_GT(shards, before) << who << " took no lease once back";
  std::printf("%s: %zu shard(s) listed when lost, %zu once back and the job done\n", who.c_str(),
              before, shards);
}

bool WaitForLine(const ActexProcess& node, const std::string& line, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (node.err().find(line) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

LeaseTable ReadLeaseTable(const std::string& host0_dir) {
  std::ifstream file(host0_dir + "/" + kLeaseLogFile);
  std::string line;
  std::getline(file, line);  // the header
  LeaseTable table;
  // A last line without its newline is still being written: getline stops at eof.
  while (std::getline(file, line) && !file.eof()) {
    auto record = ParseRecord(line);
    EXPECT_TRUE(record && table.Apply(*record)) << host0_dir << ": " << line;
  }
  return table;
}

bool HasNothingLeftToDo(const std::string& host0_dir, int host) {
  const LeaseTable table = ReadLeaseTable(host0_dir);
  return table.end() && !table.NextGrant("anyone") &&
         table.HeldBy("host-" + std::to_string(host)).empty();
}

void ExpectVerified(const TempDir& dir, const std::string& out) {
  ActexProcess verify(dir.path() + "/verify", {"verify", out});
  EXPECT_EQ(verify.Wait(std::chrono::seconds(60)), 0) << verify.out() << verify.err();
  // Every file the job wrote is one verify knows (storage/host_folder_files.h): the
  // standby's copy of the lease log too.
  EXPECT_EQ(verify.out().find("not written by actex"), std::string::npos) << verify.out();
}

ManualJob::ManualJob(const TempDir& dir, const HostNamespaces* network)
    : dir_(dir), network_(network) {
  auto port = FindFreePortTriple();
  EXPECT_TRUE(port) << port.error();
  port_ = port.value_or(0);
}

ActexProcess& ManualJob::Start(int host, int hosts, const std::string& corpus,
                               const std::string& mesh,
                               const std::function<void(NodeOptions&)>& adjust) {
  LocalClusterOptions cluster;
  cluster.hosts = hosts;
  cluster.node.mesh = mesh;
  cluster.node.join_timeout = std::chrono::seconds(20);
  cluster.node.heartbeat_timeout = std::chrono::seconds(3);
  cluster.node.extract = TinyModelOptions(corpus, dir_.path() + "/out", 1);
  cluster.node.extract.shard_bytes = 32 << 10;
  std::vector<std::string> launcher;
  if (network_) {
    const std::string port = ":" + std::to_string(port_);
    cluster.node.bind_address = network_->Address(host);
    cluster.node.coordinator = network_->Address(0) + port;
    cluster.node.standby_coordinator = network_->Address(1) + port;
    launcher = network_->Launcher(host);
  }
  adjust(cluster.node);
  std::vector<std::string> args = LocalNodeArgs(cluster, host, port_);
  args.erase(args.begin());  // the binary; ActexProcess adds it
  nodes_.push_back(std::make_unique<ActexProcess>(dir_.path() + "/host" + std::to_string(host),
                                                  args, "/dev/null", "", launcher));
  return *nodes_.back();
}

std::vector<ActexProcess*> ManualJob::StartAll(int hosts, const std::string& corpus,
                                               const std::string& mesh,
                                               const std::function<void(NodeOptions&)>& adjust) {
  std::vector<ActexProcess*> nodes;
  for (int host = 0; host < hosts; ++host)
    nodes.push_back(&Start(host, hosts, corpus, mesh, adjust));
  return nodes;
}

}  // namespace actex
