// The open shard's spill into its shard file: bytes the kernel copies (ShardFileSink::
// CopyFileIn) make the same file, with the CRC-32 of every byte, as bytes read back and
// written; a cut back spill copies what is left with that part's CRC.

#include "storage/shard_spill.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>

#include "storage/crc32.h"
#include "storage/shard_file_sink.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/temp_dir.h"

namespace actex {
namespace {

// `size` bytes no two runs of which repeat soon, so a misplaced piece shows.
std::string Pattern(size_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t state = seed;
  for (char& byte : bytes) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  return bytes;
}

// Two tensors spilled (the first 3 MiB and one odd size), then the spill written after
// a header into a sink made with `gzip` and `budget`; returns the file's bytes.
std::string SpillIntoShard(const TempDir& dir, const std::string& header, bool gzip,
                           WriteBudget* budget, bool cut_back) {
  auto spill = ShardSpill::Create(dir.path(), 1, 2, nullptr);
  EXPECT_TRUE(spill) << spill.error();
  const std::string first = Pattern(3 << 20, 1), second = Pattern(4099, 2);
  EXPECT_TRUE(spill->Append(0, first.data(), first.size()));
  EXPECT_TRUE(spill->Append(1, second.data(), second.size()));
  if (cut_back) {
    const std::vector<int64_t> mark = spill->Mark();
    const std::string dropped = Pattern(777, 3);
    EXPECT_TRUE(spill->Append(0, dropped.data(), dropped.size()));
    EXPECT_TRUE(spill->Append(1, dropped.data(), dropped.size()));
    EXPECT_TRUE(spill->CutBackTo(mark));
  }
  const std::string path = dir.File(gzip ? "shard.gz" : "shard");
  auto sink = ShardFileSink::Create(path, gzip, budget);
  EXPECT_TRUE(sink) << sink.error();
  EXPECT_TRUE((*sink)->Write(header.data(), header.size()));
  std::vector<uint8_t> scratch(1 << 16);
  auto copied = spill->CopyTo(**sink, scratch);
  EXPECT_TRUE(copied) << copied.error();
  EXPECT_TRUE((*sink)->Finish());
  const std::string bytes = ReadBytes(path);
  const std::string stored = gzip ? Gunzip(path) : bytes;
  EXPECT_EQ(stored, header + first + second);
  EXPECT_EQ((*sink)->crc32(), Crc32Of(bytes));
  EXPECT_EQ((*sink)->bytes_written(), static_cast<int64_t>(bytes.size()));
  return stored;
}

TEST(ShardSpill, CopiesIntoThePlainShardWithTheCrcOfEveryByte) {
  TempDir dir;
  SpillIntoShard(dir, "{\"header\": 1}   ", /*gzip=*/false, nullptr, /*cut_back=*/false);
}

TEST(ShardSpill, ACutBackSpillCopiesWhatIsLeftWithItsCrc) {
  TempDir dir;
  SpillIntoShard(dir, "HDR", /*gzip=*/false, nullptr, /*cut_back=*/true);
}

TEST(ShardSpill, GzipAndBudgetedShardsReadTheSpillBackAsBefore) {
  TempDir gzip_dir, budget_dir;
  SpillIntoShard(gzip_dir, "HDR", /*gzip=*/true, nullptr, /*cut_back=*/true);
  WriteBudget budget{.remaining = int64_t{1} << 30};
  SpillIntoShard(budget_dir, "HDR", /*gzip=*/false, &budget, /*cut_back=*/false);
  // The buffered path counted every byte against the budget.
  EXPECT_EQ(budget.remaining, (int64_t{1} << 30) - 3 - (3 << 20) - 4099);
}

TEST(ShardFileSink, CopyFileInCopiesInTheKernelOnlyAPlainUnbudgetedSink) {
  TempDir dir;
  const std::string source = dir.File("source"), content = Pattern(10000, 4);
  WriteBytes(source, content);
  ScopedFd from(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_GE(from.get(), 0);
  const uint32_t crc = Crc32Update(0, content.data(), content.size());

  auto gzip = ShardFileSink::Create(dir.File("a.gz"), /*gzip=*/true, nullptr);
  ASSERT_TRUE(gzip);
  EXPECT_EQ((*gzip)->CopyFileIn(from.get(), source, 10000, crc), false);
  EXPECT_EQ((*gzip)->bytes_written(), 0);

  WriteBudget budget{.remaining = 5};
  auto budgeted = ShardFileSink::Create(dir.File("b"), /*gzip=*/false, &budget);
  ASSERT_TRUE(budgeted);
  EXPECT_EQ((*budgeted)->CopyFileIn(from.get(), source, 10000, crc), false);
  EXPECT_EQ(budget.remaining, 5);

  auto plain = ShardFileSink::Create(dir.File("c"), /*gzip=*/false, nullptr);
  ASSERT_TRUE(plain);
  ASSERT_TRUE((*plain)->Write("xy", 2));
  EXPECT_EQ((*plain)->CopyFileIn(from.get(), source, 10000, crc), true);
  ASSERT_TRUE((*plain)->Finish());
  EXPECT_EQ(ReadBytes(dir.File("c")), "xy" + content);
  EXPECT_EQ((*plain)->crc32(), Crc32Of("xy" + content));
  EXPECT_EQ((*plain)->bytes_written(), 10002);
}

}  // namespace
}  // namespace actex
