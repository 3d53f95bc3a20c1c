#include <spdlog/spdlog.h>
#include <unistd.h>

#include <climits>
#include <memory>
#include <string>

#include "actors/cli/commands.h"
#include "actors/cli/extract_flags.h"
#include "actors/cli/local_cluster.h"
#include "actors/extraction_summary.h"

namespace actex {
namespace {

struct SimulateFlags {
  ExtractFlags extract;
  LocalClusterOptions cluster;
  JobTimeouts timeouts;
};

std::string OwnExecutable() {
  char path[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return length > 0 ? std::string(path, length) : "actex";
}

}  // namespace

CommandRunner AddSimulateCommand(CLI::App& command) {
  auto flags = std::make_shared<SimulateFlags>();
  command.add_option("--hosts", flags->cluster.hosts, "node processes to start on 127.0.0.1")
      ->required()
      ->check(CLI::PositiveNumber);
  AddJobFlags(command, flags->cluster.node, flags->timeouts);
  AddExtractFlags(command, flags->extract, "--shards-per-host");
  return [flags] {
    auto extract = ResolveExtractFlags(flags->extract);
    if (!extract) {
      spdlog::error("{}", extract.error());
      return 2;
    }
    flags->cluster.node.extract = *extract;
    flags->cluster.actex_binary = OwnExecutable();
    ApplyJobTimeouts(flags->timeouts, flags->cluster.node);
    if (auto key = CheckJobKey(flags->cluster.node); !key) {
      spdlog::error("{}", key.error());
      return 2;
    }
    auto ran = RunLocalCluster(flags->cluster);
    if (!ran) {
      spdlog::error("{}", ran.error().message);
      switch (ran.error().kind) {
        case LocalClusterError::Kind::kTooManyRejected:
          // Every host completed: the output is whole, as for `actex extract`'s status 3.
          return kExitTooManyRejected;
        case LocalClusterError::Kind::kRefused:
          return 2;  // the hosts refused the flags or files before any work
        case LocalClusterError::Kind::kFailed:
          break;
      }
      return 1;
    }
    spdlog::info("all {} simulated hosts finished", flags->cluster.hosts);
    return 0;
  };
}

}  // namespace actex
