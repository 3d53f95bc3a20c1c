// The open shard's spill into its shard file: bytes the kernel copies (ShardFileSink::
// CopyFileIn) make the same file, with the CRC-32 of every byte, as bytes read back and
// written; a cut back spill copies what is left with that part's CRC. In place, the
// front tensor's file becomes the shard: nameless until sealed, then whole.

#include "storage/shard_spill.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/crc32.h"
#include "storage/shard_file_sink.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

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

// Three tensors spilled in place with `front` in the shard file (the tensors before it
// left empty, as a statistics-only site's), part cut back, then sealed at dir/shard;
// returns the shard's bytes after checking its CRC, its size and the directory.
std::string SealInPlace(const TempDir& dir, size_t front, WriteBudget* budget) {
  const std::string header(64, 'H');
  auto spill = ShardSpill::CreateInPlace(dir.path(), 1, 3, front, std::ssize(header), budget);
  EXPECT_TRUE(spill) << spill.error();
  EXPECT_TRUE(spill->in_place());
  std::vector<std::string> tensors(3);
  for (size_t i = front; i < 3; ++i) {
    tensors[i] = Pattern(i == front ? (1 << 20) + 5 : 4099, static_cast<uint32_t>(i));
    EXPECT_TRUE(spill->Append(i, tensors[i].data(), tensors[i].size()));
  }
  const std::vector<int64_t> mark = spill->Mark();
  const std::string dropped = Pattern(777, 9);
  for (size_t i = front; i < 3; ++i) EXPECT_TRUE(spill->Append(i, dropped.data(), dropped.size()));
  EXPECT_TRUE(spill->CutBackTo(mark));
  // Nameless until sealed: a process that dies now leaves nothing in the directory.
  EXPECT_TRUE(DirectoryEntries(dir.path()).empty());
  std::vector<uint8_t> scratch(1 << 12);
  auto sealed = spill->SealInPlace(dir.File("shard"), header, scratch);
  EXPECT_TRUE(sealed) << sealed.error();
  const std::string bytes = ReadBytes(dir.File("shard"));
  EXPECT_EQ(bytes, header + tensors[0] + tensors[1] + tensors[2]);
  EXPECT_EQ(sealed->crc32, Crc32Of(bytes));
  EXPECT_EQ(sealed->bytes, std::ssize(bytes));
  EXPECT_EQ(DirectoryEntries(dir.path()), std::set<std::string>{"shard"});
  return bytes;
}

TEST(ShardSpill, InPlaceTheFrontTensorBecomesTheShardWithItsHeaderAndTheRestAppended) {
  TempDir first, later;
  SealInPlace(first, 0, nullptr);
  SealInPlace(later, 1, nullptr);  // after an empty tensor
}

TEST(ShardSpill, InPlaceUnderABudgetOnlyTheOtherTensorsAreWrittenTwice) {
  TempDir dir;
  WriteBudget budget{.remaining = int64_t{1} << 30};
  SealInPlace(dir, 0, &budget);
  // The front tensor and the dropped bytes once (cut back, still counted), the header
  // once, the two others spilled and then read back into the shard.
  const int64_t front = (1 << 20) + 5, other = 4099, dropped = 3 * 777, header = 64;
  EXPECT_EQ(budget.remaining, (int64_t{1} << 30) - front - dropped - header - 4 * other);
}

TEST(ShardSpill, InPlaceSealRefusesAHeaderOfAnotherLengthAndReplacesAStaleTmp) {
  TempDir dir;
  auto spill = ShardSpill::CreateInPlace(dir.path(), 1, 1, 0, 16, nullptr);
  ASSERT_TRUE(spill) << spill.error();
  ASSERT_TRUE(spill->Append(0, "rows", 4));
  std::vector<uint8_t> scratch(64);
  auto refused = spill->SealInPlace(dir.File("shard"), std::string(24, 'H'), scratch);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error(), HasSubstr("header takes 24 bytes, but 16 were left"));
  // A .tmp of a process that died while naming its shard does not stop this one.
  WriteBytes(dir.File("shard.tmp"), "stale");
  auto sealed = spill->SealInPlace(dir.File("shard"), std::string(16, 'H'), scratch);
  ASSERT_TRUE(sealed) << sealed.error();
  EXPECT_EQ(ReadBytes(dir.File("shard")), std::string(16, 'H') + "rows");
  EXPECT_EQ(DirectoryEntries(dir.path()), std::set<std::string>{"shard"});
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
