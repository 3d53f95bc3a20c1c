#ifndef ACTEX_ACTORS_CLI_LAUNCHER_ENV_H_
#define ACTEX_ACTORS_CLI_LAUNCHER_ENV_H_

#include <expected>
#include <functional>
#include <optional>
#include <string>

namespace actex {

// What the launcher that started a node tells it through the environment, so that the
// same `actex node` command runs unchanged on every host: Slurm's `srun` gives each task
// SLURM_PROCID of SLURM_NTASKS; a Kubernetes Indexed Job gives each pod its
// JOB_COMPLETION_INDEX (and no count: the manifest gives --num-hosts).
struct LauncherIds {
  std::optional<int> host_id;
  std::optional<int> num_hosts;
};

// The environment's value of a variable; null when unset (std::getenv in the binary).
using EnvironmentLookup = std::function<const char*(const char*)>;

// The ids the launcher variables give; none when no launcher set them. Fails naming the
// variable when one is not a whole number in range, or when SLURM_PROCID and
// JOB_COMPLETION_INDEX both are set and differ.
std::expected<LauncherIds, std::string> LauncherIdsFrom(const EnvironmentLookup& environment);

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_LAUNCHER_ENV_H_
