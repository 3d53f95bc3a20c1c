#ifndef ACTEX_TESTS_STORAGE_PARQUET_TEST_WRITER_H_
#define ACTEX_TESTS_STORAGE_PARQUET_TEST_WRITER_H_

// Test and bench support: writes small Parquet files for the reader to read (the
// fixtures from third-party writers are what check the reader; these make inputs of
// a chosen shape and size). One data page v1 per column chunk, PLAIN values, RLE
// levels, UNCOMPRESSED or SNAPPY.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actex::testing {

struct ParquetWriteOptions {
  int rows_per_group = 1000;
  bool snappy = true;
  // Other string columns written before the text column (each row "<name>-<row>"),
  // as FineWeb-Edu's id, url, ... columns that the reader must skip.
  std::vector<std::string> other_columns;
};

// An optional BYTE_ARRAY column `column` (std::nullopt rows are nulls).
std::string ParquetWithText(const std::vector<std::optional<std::string>>& texts,
                            const std::string& column, const ParquetWriteOptions& options);

// `input_ids`, an optional list<int32> in the 3-level LIST layout pyarrow writes.
std::string ParquetWithInputIds(const std::vector<std::vector<int32_t>>& lists,
                                const ParquetWriteOptions& options);

}  // namespace actex::testing

#endif  // ACTEX_TESTS_STORAGE_PARQUET_TEST_WRITER_H_
