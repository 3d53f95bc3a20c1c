// ParseByteSize, the reading of --shard-size (storage/byte_size.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/shard_writer.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

TEST(ParseByteSize, ParsesBinaryUnitsCaseInsensitively) {
  EXPECT_EQ(ParseByteSize("1GB"), int64_t{1} << 30);
  EXPECT_EQ(ParseByteSize("512MB"), int64_t{512} << 20);
  EXPECT_EQ(ParseByteSize("64KB"), int64_t{64} << 10);
  EXPECT_EQ(ParseByteSize("10B"), 10);
  EXPECT_EQ(ParseByteSize("1000"), 1000);
  EXPECT_EQ(ParseByteSize("2gb"), int64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("3 MiB"), int64_t{3} << 20);
  EXPECT_EQ(ParseByteSize("4k"), 4096);
  EXPECT_EQ(ParseByteSize("1TB"), int64_t{1} << 40);
}

TEST(ParseByteSize, RejectsGarbageZeroNegativeAndOverflow) {
  for (const char* text : {"", "GB", "abc", "1.5GB", "-1GB", "1XB", "1 GB extra", "0", "0MB",
                           "99999999999999999999", "9999999999TB"}) {
    auto parsed = ParseByteSize(text);
    EXPECT_FALSE(parsed.has_value()) << text;
    if (!parsed.has_value()) {
      EXPECT_THAT(parsed.error(), HasSubstr(text)) << text;
    }
  }
}

}  // namespace
}  // namespace actex
