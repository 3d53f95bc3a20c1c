// Damaged Parquet data behind an intact footer: the rows that cannot be read are
// rejected documents naming the damage, every readable row is kept with its own doc
// id, and reading goes on to the end of the file without an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "storage/corpus_reader.h"
#include "tests/storage/corpus_reading.h"
#include "tests/support/parquet_test_writer.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// 80 rows "doc-N" in 2 row groups of 40, 10 rows a page, after an "id" column.
struct DamagedTextFile {
  std::string bytes;
  std::vector<test_support::ParquetPageSpan> pages;

  DamagedTextFile() {
    std::vector<std::optional<std::string>> texts;
    for (int row = 0; row < 80; ++row) texts.push_back("doc-" + std::to_string(row));
    bytes = test_support::ParquetWithText(
        texts, "text",
        {.rows_per_group = 40, .rows_per_page = 10, .pages = &pages, .other_columns = {"id"}});
  }
  // The text column's page holding `row`.
  const test_support::ParquetPageSpan& TextPage(int64_t row) const {
    for (const auto& page : pages) {
      if (page.column == "text" && row >= page.first_row && row < page.first_row + page.rows) {
        return page;
      }
    }
    ADD_FAILURE() << "no text page holds row " << row;
    return pages.front();
  }
};

// Expects rows [0, rows) read as "doc-N", except those in [lost_first, lost_end),
// rejected with a reason starting `reason`.
void ExpectRowsWithLoss(const ReadResult& read, const std::string& path, int64_t rows,
                        int64_t lost_first, int64_t lost_end, const std::string& reason) {
  ASSERT_EQ(read.error, "");
  ASSERT_EQ(static_cast<int64_t>(read.records.size()), rows);
  for (int64_t row = 0; row < rows; ++row) {
    const CorpusRecord& record = read.records[row];
    EXPECT_EQ(record.doc_id, row);
    EXPECT_EQ(record.line, row + 1);
    EXPECT_EQ(record.file, path);
    if (row >= lost_first && row < lost_end) {
      EXPECT_THAT(record.reject_reason, StartsWith(reason)) << "row " << row;
    } else {
      EXPECT_EQ(record.reject_reason, "") << "row " << row;
      EXPECT_EQ(record.text, "doc-" + std::to_string(row));
    }
  }
}

TEST(ParquetDamage, CorruptPageDataLosesOnlyThatPagesRows) {
  TempDir dir;
  DamagedTextFile file;
  const auto& page = file.TextPage(10);  // rows 10..19, page 2 of row group 0's chunk
  for (int64_t i = 0; i < page.data_bytes; ++i) file.bytes[page.data_offset + i] = '\xFF';
  const std::string path = dir.File("damaged.parquet");
  WriteBytes(path, file.bytes);
  ReadResult read = ReadAll({.inputs = {path}});
  ExpectRowsWithLoss(read, path, 80, 10, 20,
                     "damaged Parquet data: row group 0, column \"text\": page 2 at chunk byte ");
  EXPECT_THAT(read.records[10].reject_reason, HasSubstr("SNAPPY page is corrupt"));
}

TEST(ParquetDamage, UnreadablePageHeaderLosesTheRestOfItsChunkOnly) {
  TempDir dir;
  DamagedTextFile file;
  const auto& page = file.TextPage(50);  // row group 1, page 2: rows 50..59
  for (int64_t i = page.header_offset; i < page.data_offset; ++i) file.bytes[i] = '\xFF';
  const std::string path = dir.File("damaged.parquet");
  WriteBytes(path, file.bytes);
  ReadResult read = ReadAll({.inputs = {path}});
  // Without the header nothing tells where the next page starts: rows 50..79 are
  // lost, rows 40..49 (page 1) and all of row group 0 are kept.
  ExpectRowsWithLoss(read, path, 80, 50, 80,
                     "damaged Parquet data: row group 1, column \"text\": page 2 at chunk byte ");
  EXPECT_THAT(read.records[50].reject_reason, HasSubstr("header"));
}

TEST(ParquetDamage, DamagedPageOfATokenListLosesTheRestOfThatChunk) {
  TempDir dir;
  std::vector<std::vector<int32_t>> lists;
  for (int32_t row = 0; row < 60; ++row) lists.push_back({row, row + 1});
  std::vector<test_support::ParquetPageSpan> pages;
  std::string bytes = test_support::ParquetWithInputIds(
      lists, {.rows_per_group = 30, .rows_per_page = 10, .pages = &pages});
  ASSERT_EQ(pages.size(), 6u);
  for (int64_t i = 0; i < pages[1].data_bytes; ++i) bytes[pages[1].data_offset + i] = '\xFF';
  const std::string path = dir.File("ids.parquet");
  WriteBytes(path, bytes);
  ReadResult read = ReadAll({.inputs = {path}});
  ASSERT_EQ(read.error, "");
  ASSERT_EQ(read.records.size(), 60u);
  for (int32_t row = 0; row < 60; ++row) {
    const CorpusRecord& record = read.records[row];
    EXPECT_EQ(record.doc_id, row);
    // A list's rows cannot be told apart in entries that were not read: from the
    // row in progress (row 9, which might go on in page 2) to the end of row group 0.
    if (row >= 9 && row < 30) {
      EXPECT_THAT(
          record.reject_reason,
          StartsWith("damaged Parquet data: row group 0, column \"input_ids.list.element\""))
          << row;
    } else {
      EXPECT_EQ(record.reject_reason, "") << row;
      EXPECT_EQ(record.input_ids, (std::vector<int32_t>{row, row + 1})) << row;
    }
  }
}

TEST(ParquetDamage, ChunkCutShortByTheFileLosesOnlyTheRowsPastTheCut) {
  TempDir dir;
  DamagedTextFile file;
  // The footer claims the text chunk of row group 1 reaches past the data area.
  const auto& cut = file.TextPage(60);  // pages 1-2 (rows 40..59) lie before the cut
  std::string truncated = file.bytes.substr(0, cut.data_offset + 1);
  uint32_t footer_bytes = 0;
  std::memcpy(&footer_bytes, file.bytes.data() + file.bytes.size() - 8, 4);
  const size_t footer_at = file.bytes.size() - 8 - footer_bytes;
  truncated += file.bytes.substr(footer_at);
  const std::string path = dir.File("cut.parquet");
  WriteBytes(path, truncated);
  ReadResult read = ReadAll({.inputs = {path}});
  ExpectRowsWithLoss(read, path, 80, 60, 80,
                     "damaged Parquet data: row group 1, column \"text\": the chunk at bytes ");
  EXPECT_THAT(read.records[60].reject_reason, HasSubstr("extends past the data area"));
}

}  // namespace
}  // namespace actex
