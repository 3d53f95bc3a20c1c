#include "base/machine_memory.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "base/text.h"

namespace actex {
namespace {

// cgroup v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712).
constexpr int64_t kNoLimitAbove = int64_t{1} << 62;

std::optional<int64_t> ReadCgroupLimit(const char* path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  return ParseCgroupMemoryLimit(text.str());
}

}  // namespace

std::optional<int64_t> ParseCgroupMemoryLimit(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int64_t bytes = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;  // "max"
  if (bytes <= 0 || bytes >= kNoLimitAbove) return std::nullopt;
  return bytes;
}

UsableMemory UsableMemory::Find() {
  UsableMemory usable;
  const int64_t pages = sysconf(_SC_PHYS_PAGES);
  const int64_t page_bytes = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_bytes > 0) {
    usable.bytes = pages * page_bytes;
    usable.what = "this machine's " + BytesText(static_cast<double>(usable.bytes));
  }
  // A container sees its own group at the root of /sys/fs/cgroup (v2, or v1's memory
  // controller).
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const std::optional<int64_t> limit = ReadCgroupLimit(path);
    if (limit && (usable.bytes == 0 || *limit < usable.bytes)) {
      usable.bytes = *limit;
      usable.what = "this container's memory limit of " + BytesText(static_cast<double>(*limit)) +
                    " (" + path + ")";
    }
  }
  return usable;
}

}  // namespace actex
