// The CRC-32 metadata.json lists is zlib's (Python's zlib.crc32): computed by ISA-L, it
// must give zlib's value for every length and alignment, chained over any split.
#include "storage/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace actex {
namespace {

uint32_t ZlibCrc32(uint32_t crc, const uint8_t* data, size_t size) {
  return static_cast<uint32_t>(::crc32(crc, data, static_cast<uInt>(size)));
}

std::vector<uint8_t> RandomBytes(size_t size) {
  std::vector<uint8_t> bytes(size);
  std::mt19937 random(11);
  for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(random());
  return bytes;
}

TEST(Crc32, IsTheStandardCheckValue) { EXPECT_EQ(Crc32Hex("123456789"), "cbf43926"); }

// The vector paths take blocks of 16 to 256 bytes from an aligned address: every length
// up to past a few blocks at every offset within a cache line meets each of their heads
// and tails.
TEST(Crc32, IsZlibsAtEveryLengthAndAlignment) {
  const std::vector<uint8_t> bytes = RandomBytes(2048 + 64);
  for (size_t offset = 0; offset < 64; ++offset) {
    for (size_t size = 0; size <= 1100; ++size) {
      const uint8_t* data = bytes.data() + offset;
      ASSERT_EQ(Crc32Update(0, data, size), ZlibCrc32(0, data, size))
          << size << " bytes at offset " << offset;
    }
  }
  const std::vector<uint8_t> large = RandomBytes((size_t{3} << 20) + 5);
  EXPECT_EQ(Crc32Update(0, large.data(), large.size()), ZlibCrc32(0, large.data(), large.size()));
}

// A file's CRC grows as its pieces are written, and is combined from its parts'.
TEST(Crc32, ChainsAndCombinesOverAnySplit) {
  const std::vector<uint8_t> bytes = RandomBytes(100000);
  const uint32_t whole = ZlibCrc32(0, bytes.data(), bytes.size());
  for (size_t split : {size_t{0}, size_t{1}, size_t{255}, size_t{4099}, size_t{65536},
                       bytes.size() - 1, bytes.size()}) {
    const uint32_t first = Crc32Update(0, bytes.data(), split);
    EXPECT_EQ(Crc32Update(first, bytes.data() + split, bytes.size() - split), whole) << split;
    const uint32_t second = Crc32Update(0, bytes.data() + split, bytes.size() - split);
    EXPECT_EQ(Crc32Combine(first, second, static_cast<int64_t>(bytes.size() - split)), whole)
        << split;
  }
}

}  // namespace
}  // namespace actex
