#include <spdlog/spdlog.h>

#include <cstdlib>
#include <expected>
#include <memory>
#include <string>

#include "actors/cli/commands.h"
#include "actors/cli/extract_flags.h"
#include "actors/cli/launcher_env.h"
#include "actors/cli/stop_signals.h"
#include "actors/node.h"

namespace actex {
namespace {

struct NodeFlags {
  ExtractFlags extract;
  NodeOptions node;
  JobTimeouts timeouts;
  std::string bind;
};

// The launcher's ids (launcher_env.h) stand for --host-id and --num-hosts where neither
// the flag nor its ACTEX_* variable was given.
std::expected<void, std::string> FillFromLauncher(CLI::Option* host_id, CLI::Option* num_hosts,
                                                  NodeOptions& node) {
  auto ids = LauncherIdsFrom(std::getenv);
  if (!ids) return std::unexpected(ids.error());
  if (host_id->count() == 0 && std::getenv("ACTEX_HOST_ID") == nullptr && ids->host_id) {
    node.host_id = *ids->host_id;
  }
  if (num_hosts->count() == 0 && std::getenv("ACTEX_NUM_HOSTS") == nullptr && ids->num_hosts) {
    node.num_hosts = *ids->num_hosts;
  }
  return {};
}

}  // namespace

CommandRunner AddNodeCommand(CLI::App& command) {
  auto flags = std::make_shared<NodeFlags>();
  NodeOptions& node = flags->node;
  command.add_option("--coordinator", node.coordinator, "host 0's HOST:PORT")
      ->envname("ACTEX_COORDINATOR");
  CLI::Option* host_id = command.add_option("--host-id", node.host_id, "this host's index")
                             ->envname("ACTEX_HOST_ID")
                             ->check(CLI::NonNegativeNumber);
  CLI::Option* num_hosts = command.add_option("--num-hosts", node.num_hosts, "hosts in the job")
                               ->envname("ACTEX_NUM_HOSTS")
                               ->check(CLI::PositiveNumber);
  command
      .add_option("--max-hosts", node.max_hosts,
                  "host ids up to this many may join the running job later and take leases "
                  "(--mesh 2d; default: --num-hosts)")
      ->envname("ACTEX_MAX_HOSTS")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--standby-coordinator", node.standby_coordinator,
                  "HOST:PORT where the standby coordinator listens (on host 1 of a --mesh 2d job "
                  "of 3 hosts or more; it also takes PORT+1 and PORT+2), so that a node started "
                  "after host 0 was lost finds the job; give every host the same")
      ->envname("ACTEX_STANDBY_COORDINATOR");
  command.add_option("--bind", flags->bind,
                     "this host's own address, where its tcp sockets listen, and host 0's "
                     "coordinator or the standby's (default: the host --coordinator names)");
  AddJobFlags(command, node, flags->timeouts);
  AddExtractFlags(command, flags->extract, "--shards-per-host");
  return [flags, host_id, num_hosts] {
    NodeOptions& node = flags->node;
    if (auto filled = FillFromLauncher(host_id, num_hosts, node); !filled) {
      spdlog::error("{}", filled.error());
      return 2;
    }
    auto extract = ResolveExtractFlags(flags->extract);
    if (!extract) {
      spdlog::error("{}", extract.error());
      return 2;
    }
    node.extract = *extract;
    node.extract.show_progress = true;
    node.bind_address = flags->bind;
    ApplyJobTimeouts(flags->timeouts, node);
    if (auto key = CheckJobKey(node); !key) {
      spdlog::error("{}", key.error());
      return 2;
    }
    spdlog::set_pattern("[%H:%M:%S.%e] [host " + std::to_string(node.host_id) + "] [%^%l%$] %v");
    node.stop_signals = &CountStopSignals();
    return RunLocked(node);
  };
}

}  // namespace actex
