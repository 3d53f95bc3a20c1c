#include "actors/cli/extract_flags.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "actors/extract_flag_kinds.h"
#include "actors/extract_flag_table.h"
#include "actors/host_output.h"
#include "actors/node.h"
#include "actors/node_resources.h"
#include "transport/job_security.h"

namespace actex {

void AddExtractFlags(CLI::App& command, ExtractFlags& flags, const std::string& shards_flag) {
  const std::vector<ExtractFlag>& table = ExtractFlagTable();
  // Sized once: CLI11 keeps pointers to these elements.
  flags.names.assign(table.size(), "");
  flags.texts.assign(table.size(), {});
  flags.switches.assign(table.size(), 0);
  flags.options.assign(table.size(), nullptr);
  const ExtractOptions defaults;
  for (size_t row = 0; row < table.size(); ++row) {
    const ExtractFlag& flag = table[row];
    flags.names[row] = flag.name == "--shards" ? shards_flag : flag.name;
    CLI::Option* option = nullptr;
    if (flag.arity == ExtractFlag::Arity::kSwitch) {
      option = command.add_flag(flags.names[row], flags.switches[row], flag.help);
    } else {
      option = command.add_option(flags.names[row], flags.texts[row], flag.help);
      if (flag.arity == ExtractFlag::Arity::kOne) option->expected(1);
      if (!flag.required) option->default_str(ConfigValueText(flag.record(defaults)));
    }
    if (flag.required) option->required();
    flags.options[row] = option;
  }
}

std::expected<ExtractOptions, std::string> ResolveExtractFlags(const ExtractFlags& flags) {
  const std::vector<ExtractFlag>& table = ExtractFlagTable();
  ExtractOptions options;
  for (size_t row = 0; row < table.size(); ++row) {
    if (flags.options[row] == nullptr || flags.options[row]->count() == 0) continue;
    if (auto parsed = table[row].parse(flags.texts[row], options); !parsed) {
      return std::unexpected(flags.names[row] + ": " + parsed.error());
    }
  }
  return options;
}

void AddJobFlags(CLI::App& command, NodeOptions& node, JobTimeouts& timeouts) {
  // As the extract flags' waits (flag_kinds::kMaxFlagSeconds): each becomes milliseconds.
  const CLI::Range kAtMostAYear(
      0.0, flag_kinds::kMaxFlagSeconds,
      "at most " + flag_kinds::ToText(flag_kinds::kMaxFlagSeconds) + " s, a year");
  command.add_option("--mesh", node.mesh,
                     "1d (one replica over every shard), 2d (one replica per host) or "
                     "data=D,model=M");
  command.add_option("--machine-id", node.machine_id, "this job's index among independent jobs")
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--total-machines", node.total_machines,
                  "independent jobs splitting the corpus first")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--join-timeout", timeouts.join_seconds, "seconds to wait for every host to join")
      ->check(CLI::PositiveNumber & kAtMostAYear);
  command
      .add_option("--heartbeat-timeout", timeouts.heartbeat_seconds,
                  "seconds of silence after which a host counts as lost")
      ->check(CLI::PositiveNumber & kAtMostAYear);
  command
      .add_option("--job-key-file", node.job_key_file,
                  "the job's secret (from `actex make-job-key`), the same on every host: only "
                  "holders join, and all tcp traffic is encrypted (default: an open job)")
      ->envname("ACTEX_JOB_KEY_FILE");
}

std::expected<void, std::string> CheckJobKey(const NodeOptions& node) {
  if (node.job_key_file.empty()) return {};
  auto security = JobSecurity::FromKeyFile(node.job_key_file);
  if (!security) return std::unexpected("--job-key-file: " + security.error());
  return {};
}

void ApplyJobTimeouts(const JobTimeouts& timeouts, NodeOptions& node) {
  node.join_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeouts.join_seconds * 1000));
  node.heartbeat_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(timeouts.heartbeat_seconds * 1000));
}

int ReportRun(const std::expected<ExtractionSummary, std::string>& summary) {
  if (!summary) {
    spdlog::error("{}", summary.error());
    return 1;
  }
  if (summary->ending != RunEnding::kCompleted) {
    spdlog::warn("{}", StopLine(*summary));
    return kExitStoppedBySignal;
  }
  spdlog::info("{}", SummaryLine(*summary));
  if (const std::string warning = NonFiniteWarning(*summary); !warning.empty()) {
    spdlog::warn("{}", warning);
  }
  if (auto suspect = TooManyRejected(*summary)) {
    spdlog::error("{}", *suspect);
    return kExitTooManyRejected;
  }
  return 0;
}

int RunLocked(const NodeOptions& node) {
  const auto load_start = std::chrono::steady_clock::now();
  auto prepared = PrepareNode(node);
  if (!prepared) {
    // A flag, or a file one names, refused before any work: the same command would be
    // refused again, so this is a usage error (2), which schedulers do not retry.
    spdlog::error("{}", prepared.error());
    return 2;
  }
  auto lock = LockHostOutput(node);  // held until the run returns
  if (!lock) {
    spdlog::error("{}", lock.error().message);
    return lock.error().kind == OutputLock::Refusal::kHeld ? 2 : 1;
  }
  return ReportRun(RunPreparedNode(node, *prepared, load_start));
}

}  // namespace actex
