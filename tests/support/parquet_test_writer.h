#ifndef ACTEX_TESTS_SUPPORT_PARQUET_TEST_WRITER_H_
#define ACTEX_TESTS_SUPPORT_PARQUET_TEST_WRITER_H_

// Test and bench support: writes small Parquet files for the reader to read (the
// fixtures from third-party writers are what check the reader; these make inputs of
// a chosen shape and size). Data pages v1 (one per column chunk, or rows_per_page
// rows each), PLAIN values, RLE levels, UNCOMPRESSED or SNAPPY.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actex::test_support {

// Where one data page was written, so a test can damage it.
struct ParquetPageSpan {
  int group = 0;
  std::string column;
  int64_t header_offset = 0;  // in the file
  int64_t data_offset = 0;    // its (compressed) data, after the header
  int64_t data_bytes = 0;
  int64_t first_row = 0;  // of the file
  int64_t rows = 0;
};

struct ParquetWriteOptions {
  int rows_per_group = 1000;
  int rows_per_page = 0;  // 0: one data page per column chunk
  // When set, receives every data page written, in file order.
  std::vector<ParquetPageSpan>* pages = nullptr;
  bool snappy = true;
  // Other string columns written before the text column (each row "<name>-<row>"),
  // as FineWeb-Edu's id, url, ... columns that the reader must skip.
  std::vector<std::string> other_columns{};
};

// An optional BYTE_ARRAY column `column` (std::nullopt rows are nulls).
std::string ParquetWithText(const std::vector<std::optional<std::string>>& texts,
                            const std::string& column, const ParquetWriteOptions& options);

// `input_ids`, an optional list<int32> in the 3-level LIST layout pyarrow writes.
std::string ParquetWithInputIds(const std::vector<std::vector<int32_t>>& lists,
                                const ParquetWriteOptions& options);

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_SUPPORT_PARQUET_TEST_WRITER_H_
