#ifndef ACTEX_BASE_MACHINE_MEMORY_H_
#define ACTEX_BASE_MACHINE_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace actex {

// The memory this process may use: the machine's physical memory, or its control
// group's limit when that is lower (a container's or a Slurm job's), so that a flag
// asking for more than that is refused instead of believed.
struct UsableMemory {
  int64_t bytes = 0;  // 0 when unknown: nothing is refused then
  std::string what;   // "this machine's 23.4 GiB", "this container's limit of 8 GiB"

  // The memory this process may use now.
  static UsableMemory Find();
};

// A control group's memory limit file's text: a byte count (cgroup v2's memory.max,
// v1's memory.limit_in_bytes), or nothing for "max" or v1's near-2^63 "no limit".
std::optional<int64_t> ParseCgroupMemoryLimit(std::string_view text);

}  // namespace actex

#endif  // ACTEX_BASE_MACHINE_MEMORY_H_
