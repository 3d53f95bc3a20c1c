#ifndef ACTEX_STORAGE_PARQUET_PARQUET_FILE_READER_H_
#define ACTEX_STORAGE_PARQUET_PARQUET_FILE_READER_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/file_io.h"
#include "storage/parquet/column_choice.h"
#include "storage/parquet/parquet_metadata.h"

namespace actex::parquet {

// A file's footer, checked: magic at both ends, a length within the file, metadata
// that decodes, row groups whose rows add up to the file's.
struct ParquetFooter {
  FileMetaData meta;
  int64_t data_end = 0;  // the footer's first byte: no column chunk reaches it
};
std::expected<ParquetFooter, std::string> ReadParquetFooter(int fd, const std::string& path);

// The number of rows a Parquet file's footer gives, reading nothing else.
std::expected<int64_t, std::string> CountParquetRows(const std::string& path);

// One row of the chosen column.
struct ParquetRow {
  int64_t row = 0;            // 0-based position in the file
  bool null = false;          // the value (or the whole list) is null
  std::string_view text;      // a string column's bytes, exactly as stored; valid until Next()
  std::vector<int64_t> ids;   // a token list's values
  bool null_element = false;  // a token list holding a null
  // Non-empty: the row's value lies in damaged data and cannot be read; this says
  // where and what ("row group 2, column \"text\": page 5 at chunk byte 8123: ...").
  // Valid until Next().
  std::string_view damage;
};

// Reads one column of a Parquet file row by row: the footer first (magic, length,
// metadata, schema, the column's type), then one row group's column chunk at a
// time, so memory is about one column chunk whatever the file size. Only the
// chosen column's chunks are read and decompressed. Messages name no file: the
// caller adds it.
class ParquetFileReader {
 public:
  // Refuses a file that is not Parquet (too small, bad magic, footer length out of
  // range, undecodable metadata) or whose column is missing or of the wrong type,
  // before reading any data page.
  static std::expected<std::unique_ptr<ParquetFileReader>, std::string> Open(
      const std::string& path, const std::string& text_field);

  // Decides, per row group, whether it is read: given its first and last row, it
  // says whether any of them is wanted. Unwanted row groups are passed over unread.
  using RowGroupFilter = std::function<bool(int64_t first_row, int64_t last_row)>;

  // The next row, std::nullopt after the last one. Every row the footer counts is
  // returned once, in order; a row whose value lies in damaged data comes with
  // `damage` set. A page whose header is intact but whose data is not costs its own
  // rows (flat columns; in a list column the rest of the chunk from the row in
  // progress); an unreadable page header, a chunk cut short or running past the
  // data area costs the rest of that chunk's rows; the next row group is read as
  // usual. Errors (a read error, an unsupported encoding, a chunk holding more rows
  // than the footer) name the row group and column and stick.
  std::expected<std::optional<ParquetRow*>, std::string> Next(const RowGroupFilter& wanted);

  int64_t rows() const { return rows_; }  // from the footer
  const ColumnChoice& column() const { return choice_; }

 private:
  ParquetFileReader() = default;
  // Reads the current row group's chunk; a chunk known to be damaged from the
  // footer alone loses its rows (only a read error is an error).
  std::expected<void, std::string> LoadRowGroup();
  enum class EntryState { kEntry, kChunkEnd, kDamaged };
  // Makes sure the current page has an entry left. kDamaged: rows were lost to a
  // damaged page (`inside_row`: a list row in progress is among them).
  std::expected<EntryState, std::string> HasEntry(bool inside_row);
  // The current row group's rows not yet returned become damaged rows, for `why`.
  void LoseRestOfGroup(const std::string& why);
  ParquetRow* NextDamagedRow();
  // Reads the row at the cursor into row_; false when damage took it (the rows
  // lost are then waiting in damaged_rows_).
  std::expected<bool, std::string> ReadRow();
  std::string Where() const;

  ScopedFd fd_;
  int64_t data_end_ = 0;  // where the footer starts
  FileMetaData meta_;
  ColumnChoice choice_;
  int64_t rows_ = 0;
  size_t group_ = 0;
  int64_t group_first_row_ = 0;
  std::unique_ptr<ColumnChunkReader> chunk_;
  bool group_open_ = false;  // group_'s rows are being returned
  int64_t group_rows_read_ = 0;
  int64_t damaged_rows_ = 0;  // rows to return as damaged before reading on
  std::string damage_;        // why they are
  std::string chunk_note_;    // how the current chunk was cut short, if it was ("...; ")
  size_t entry_ = 0, value_ = 0;  // cursors in the current page
  ParquetRow row_;
  std::string error_;  // sticky
};

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_PARQUET_FILE_READER_H_
