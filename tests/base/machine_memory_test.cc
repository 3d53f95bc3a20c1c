// The memory a flag is checked against: the machine's, or a container's limit read
// from the cgroup file as the kernel writes it.
#include "base/machine_memory.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

TEST(CgroupMemoryLimit, ABytesCountIsALimitAndMaxOrV1sNoLimitAreNone) {
  EXPECT_EQ(ParseCgroupMemoryLimit("8589934592\n"), 8589934592);
  EXPECT_EQ(ParseCgroupMemoryLimit("max\n"), std::nullopt);                  // v2, no limit
  EXPECT_EQ(ParseCgroupMemoryLimit("9223372036854771712\n"), std::nullopt);  // v1, no limit
  EXPECT_EQ(ParseCgroupMemoryLimit(""), std::nullopt);
  EXPECT_EQ(ParseCgroupMemoryLimit("12 kB"), std::nullopt);
}

TEST(UsableMemory, IsKnownAndNamedOnLinux) {
  const UsableMemory usable = UsableMemory::Find();
  EXPECT_GT(usable.bytes, int64_t{1} << 20);
  EXPECT_NE(usable.what.find("this "), std::string::npos) << usable.what;
}

}  // namespace
}  // namespace actex
