#include "model/kernels/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace actex {
namespace {

// The "THPeligible" line of the mapping of /proc/self/smaps that holds `address`: 1 when
// the kernel may back it with transparent huge pages; -1 when none says.
int HugePageEligible(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto target = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t first = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> first >> dash >> end && dash == '-') {
      inside = first <= target && target < end;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

std::string TransparentHugePages() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(setting, line);
  return line;
}

TEST(HugePageVector, ALargeBufferIsAlignedToAHugePageAndOfferedToTheKernel) {
  HugePageVector<float> buffer(3 * (size_t{1} << 20));  // 12 MiB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % (size_t{2} << 20), 0u);
  for (size_t i = 0; i < buffer.size(); i += 1024) buffer[i] = static_cast<float>(i);
  EXPECT_EQ(buffer[buffer.size() - 1024], static_cast<float>(buffer.size() - 1024));
  // "[never]" refuses every advice; otherwise the advised range is eligible.
  if (TransparentHugePages().find("[never]") == std::string::npos) {
    EXPECT_EQ(HugePageEligible(buffer.data()), 1) << TransparentHugePages();
  }
}

TEST(HugePageVector, GrowsKeepingItsValuesAndSmallBuffersAreOrdinary) {
  HugePageVector<uint16_t> buffer(100, 7);
  buffer.resize(size_t{3} << 20, 9);  // from the ordinary allocator to a huge block
  EXPECT_EQ(buffer[99], 7);
  EXPECT_EQ(buffer[100], 9);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % (size_t{2} << 20), 0u);
}

}  // namespace
}  // namespace actex
