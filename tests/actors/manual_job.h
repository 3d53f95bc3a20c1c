#ifndef ACTEX_TESTS_ACTORS_MANUAL_JOB_H_
#define ACTEX_TESTS_ACTORS_MANUAL_JOB_H_

// Test support for jobs of several hosts run as real `actex node` processes on
// 127.0.0.1, started one by one as on separate machines.

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actex_process.h"
#include "actors/extract_options.h"
#include "actors/node_options.h"
#include "coordination/lease_table.h"
#include "extraction_reader.h"
#include "host_namespaces.h"

namespace actex {

// `documents` pre-tokenized lines of `length` pseudo-random ids below the fixture's
// vocabulary of 512, and a few rejects among them.
std::string Corpus(int documents, int length);

// The tiny fixture model, two sites of layers 0-1 in float32, `shards_per_host`
// shards, batches of 96 tokens and chunks of three documents (so a chunk's end cuts
// batches short), one BLAS thread.
ExtractOptions TinyModelOptions(const std::string& corpus, const std::string& out,
                                int shards_per_host);

// `actex verify OUT` exits 0 (run in a folder of `dir`).
void ExpectVerified(const TempDir& dir, const std::string& out);

// A folder's metadata.json, or a discarded value when unreadable.
nlohmann::json Metadata(const std::string& host_dir);
// How many shards a folder's metadata.json lists (0 when unreadable).
size_t ListedShards(const std::string& host_dir);
// The folder lists more shards at the end than `before`, when `who` came back to the
// job: it took leases again. Prints both counts.
void ExpectListedMoreOnceBack(const std::string& host_dir, size_t before, const std::string& who);

// Waits until `node` logged `line`; false past `limit`.
bool WaitForLine(const ActexProcess& node, const std::string& line, std::chrono::seconds limit);

// The lease table host 0's lease log in `host0_dir` holds as far as it is written
// (an empty table before the log exists).
LeaseTable ReadLeaseTable(const std::string& host0_dir);
// Whether that table knows where the corpus ends, has no chunk free, and has host
// `host` holding none it did not list: the host's replica has nothing left to do
// while others may still.
bool HasNothingLeftToDo(const std::string& host0_dir, int host);

// Nodes started one by one, as on separate machines, with one coordinator port.
class ManualJob {
 public:
  // With `network`, each host runs in its own namespace of it, binds its address
  // there, and finds the coordinator at host 0's address and the standby at host 1's;
  // else every host is on 127.0.0.1. `network` must outlive the job.
  explicit ManualJob(const TempDir& dir, const HostNamespaces* network = nullptr);

  // Starts host `host` of `hosts` writing to DIR/out with 32 KB shards, a 20 s join
  // and a 3 s heartbeat timeout; `adjust` changes its options first.
  ActexProcess& Start(
      int host, int hosts, const std::string& corpus, const std::string& mesh = "1d",
      const std::function<void(NodeOptions&)>& adjust = [](NodeOptions&) {});
  // Starts hosts 0 to hosts - 1 as Start does.
  std::vector<ActexProcess*> StartAll(
      int hosts, const std::string& corpus, const std::string& mesh = "1d",
      const std::function<void(NodeOptions&)>& adjust = [](NodeOptions&) {});
  int port() const { return port_; }

 private:
  const TempDir& dir_;
  const HostNamespaces* network_;
  int port_ = 0;
  std::vector<std::unique_ptr<ActexProcess>> nodes_;
};

}  // namespace actex

#endif  // ACTEX_TESTS_ACTORS_MANUAL_JOB_H_
