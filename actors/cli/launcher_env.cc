#include "actors/cli/launcher_env.h"

#include <charconv>
#include <cstring>

namespace actex {
namespace {

// The variable's value as an int of at least `minimum`; nullopt when it is unset.
std::expected<std::optional<int>, std::string> ReadCount(const EnvironmentLookup& environment,
                                                         const char* name, int minimum) {
  const char* text = environment(name);
  if (text == nullptr) return std::nullopt;
  int value = 0;
  const char* end = text + std::strlen(text);
  auto [stop, error] = std::from_chars(text, end, value);
  if (error != std::errc() || stop != end || value < minimum) {
    return std::unexpected(std::string(name) + "=\"" + text + "\" is not a whole number of " +
                           std::to_string(minimum) +
                           " or more; unset it or give the flag it stands for");
  }
  return value;
}

}  // namespace

std::expected<LauncherIds, std::string> LauncherIdsFrom(const EnvironmentLookup& environment) {
  auto slurm_rank = ReadCount(environment, "SLURM_PROCID", 0);
  if (!slurm_rank) return std::unexpected(slurm_rank.error());
  auto slurm_tasks = ReadCount(environment, "SLURM_NTASKS", 1);
  if (!slurm_tasks) return std::unexpected(slurm_tasks.error());
  auto job_index = ReadCount(environment, "JOB_COMPLETION_INDEX", 0);
  if (!job_index) return std::unexpected(job_index.error());
  if (*slurm_rank && *job_index && **slurm_rank != **job_index) {
    return std::unexpected("SLURM_PROCID=" + std::to_string(**slurm_rank) +
                           " and JOB_COMPLETION_INDEX=" + std::to_string(**job_index) +
                           " disagree on this host's id: give --host-id");
  }
  LauncherIds ids;
  ids.host_id = *slurm_rank ? *slurm_rank : *job_index;
  ids.num_hosts = *slurm_tasks;
  return ids;
}

}  // namespace actex
