// LineReader's progress through a file (what the monitor's estimated total rests on):
// exact for plain JSONL, and for gzip in step with the lines returned, not with the
// compressed bytes read ahead of them.
#include "storage/line_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/support/test_files.h"

namespace actex {
namespace {

constexpr int kLines = 100000;

// `lines` lines of 64 pseudo-random hex digits: gzip keeps about half their bytes, so
// the file is several of the reader's 1 MiB reads long.
std::string HexLines(int lines) {
  std::string text;
  uint64_t x = 88172645463325252u;
  for (int line = 0; line < lines; ++line) {
    for (int part = 0; part < 4; ++part) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      char hex[17];
      std::snprintf(hex, sizeof(hex), "%016" PRIx64, x);
      text += hex;
    }
    text += '\n';
  }
  return text;
}

// Reads until the reader returned `lines` lines in all.
void ReadTo(LineReader& reader, int64_t lines) {
  while (reader.lines() < lines) {
    auto line = reader.Next();
    ASSERT_TRUE(line.has_value()) << line.error();
    ASSERT_TRUE(line->has_value());
  }
}

TEST(LineReader, GzipProgressFollowsTheLinesReturnedNotTheReadAhead) {
  TempDir dir;
  const std::string path = dir.File("corpus.jsonl.gz");
  const std::string text = HexLines(kLines);
  gzFile gz = gzopen(path.c_str(), "wb6");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  const auto file_bytes = static_cast<double>(std::filesystem::file_size(path));
  ASSERT_GT(file_bytes, 3 << 20) << "a file of several reads";

  auto reader = LineReader::Open(path, 1 << 20);
  ASSERT_TRUE(reader.has_value()) << reader.error();
  for (int quarter = 1; quarter <= 3; ++quarter) {
    ReadTo(**reader, kLines / 4 * quarter);
    EXPECT_NEAR((*reader)->file_bytes_consumed() / file_bytes, 0.25 * quarter, 0.02)
        << "after " << (*reader)->lines() << " lines";
  }
  ReadTo(**reader, kLines);
  auto end = (*reader)->Next();
  ASSERT_TRUE(end.has_value() && !end->has_value());
  EXPECT_EQ((*reader)->file_bytes_consumed(), static_cast<int64_t>(file_bytes));
}

TEST(LineReader, PlainProgressIsTheBytesOfTheLinesReturned) {
  TempDir dir;
  const std::string path = dir.File("corpus.jsonl");
  WriteBytes(path, HexLines(kLines));
  auto reader = LineReader::Open(path, 1 << 20);
  ASSERT_TRUE(reader.has_value()) << reader.error();
  for (const int64_t lines : {1, 12345, kLines}) {
    ReadTo(**reader, lines);
    EXPECT_EQ((*reader)->file_bytes_consumed(), lines * 65) << lines << " lines";
  }
}

}  // namespace
}  // namespace actex
