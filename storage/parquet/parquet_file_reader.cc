#include "storage/parquet/parquet_file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "storage/parquet/page_codec.h"

namespace actex::parquet {
namespace {

constexpr char kMagic[] = "PAR1";
constexpr int64_t kMagicBytes = 4;
constexpr int64_t kTrailerBytes = 8;  // footer length + magic

}  // namespace

std::expected<ParquetFooter, std::string> ReadParquetFooter(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::unexpected(OsError("cannot stat", path, errno));
  const int64_t size = info.st_size;
  if (size == 0) return std::unexpected(std::string("empty file, not Parquet"));
  if (size < kMagicBytes + kTrailerBytes) {
    return std::unexpected("too small to be a Parquet file (" + std::to_string(size) + " bytes)");
  }
  uint8_t head[4], trailer[8];
  if (auto read = PreadAll(fd, head, 4, 0, path); !read) return std::unexpected(read.error());
  if (auto read = PreadAll(fd, trailer, 8, size - 8, path); !read) {
    return std::unexpected(read.error());
  }
  if (std::memcmp(trailer + 4, kMagic, 4) != 0) {
    return std::unexpected(
        std::memcmp(head, kMagic, 4) == 0
            ? std::string("truncated or not a Parquet file: no PAR1 footer magic")
            : std::string("not a Parquet file: bad magic"));
  }
  if (std::memcmp(head, kMagic, 4) != 0) {
    return std::unexpected(std::string("not a Parquet file: bad magic"));
  }
  uint32_t footer_length;
  std::memcpy(&footer_length, trailer, 4);
  if (footer_length == 0) return std::unexpected(std::string("footer length 0: no metadata"));
  if (footer_length > size - kMagicBytes - kTrailerBytes) {
    return std::unexpected("footer length " + std::to_string(footer_length) +
                           " exceeds the file size " + std::to_string(size));
  }
  ParquetFooter footer;
  footer.data_end = size - kTrailerBytes - footer_length;
  std::vector<uint8_t> bytes(footer_length);
  if (auto read = PreadAll(fd, bytes.data(), bytes.size(), footer.data_end, path); !read) {
    return std::unexpected(read.error());
  }
  auto meta = DecodeFileMetaData(bytes.data(), bytes.size());
  if (!meta) return std::unexpected(meta.error());
  footer.meta = std::move(*meta);
  int64_t rows = 0;
  for (size_t g = 0; g < footer.meta.row_groups.size(); ++g) {
    const int64_t group_rows = footer.meta.row_groups[g].num_rows;
    if (group_rows < 0 || group_rows > INT64_MAX - rows) {
      return std::unexpected("row group " + std::to_string(g) + " has " +
                             std::to_string(group_rows) + " rows");
    }
    rows += group_rows;
  }
  if (rows != footer.meta.num_rows) {
    return std::unexpected("footer says " + std::to_string(footer.meta.num_rows) +
                           " rows, its row groups hold " + std::to_string(rows));
  }
  return footer;
}

std::expected<int64_t, std::string> CountParquetRows(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::unexpected(OsError("cannot open", path, errno));
  auto footer = ReadParquetFooter(fd.get(), path);
  if (!footer) return std::unexpected(footer.error());
  return footer->meta.num_rows;
}

std::expected<std::unique_ptr<ParquetFileReader>, std::string> ParquetFileReader::Open(
    const std::string& path, const std::string& text_field) {
  std::unique_ptr<ParquetFileReader> reader(new ParquetFileReader());
  reader->fd_ = ScopedFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (reader->fd_.get() < 0) return std::unexpected(OsError("cannot open", path, errno));
  auto footer = ReadParquetFooter(reader->fd_.get(), path);
  if (!footer) return std::unexpected(footer.error());
  reader->data_end_ = footer->data_end;
  reader->meta_ = std::move(footer->meta);
  auto choice = ChooseColumn(reader->meta_.schema, text_field);
  if (!choice) return std::unexpected(choice.error());
  reader->choice_ = std::move(*choice);
  for (size_t g = 0; g < reader->meta_.row_groups.size(); ++g) {
    const RowGroupMeta& group = reader->meta_.row_groups[g];
    if (static_cast<size_t>(reader->choice_.leaf.index) >= group.columns.size()) {
      return std::unexpected("row group " + std::to_string(g) + " lacks column \"" +
                             reader->choice_.leaf.path + "\"");
    }
    const ColumnChunkMeta& column = group.columns[reader->choice_.leaf.index];
    if (column.type != reader->choice_.leaf.type) {
      return std::unexpected("row group " + std::to_string(g) + ", column \"" +
                             reader->choice_.leaf.path + "\": type " +
                             PhysicalTypeName(column.type) + " differs from the schema's");
    }
    if (auto codec = CheckCodec(column.codec); !codec) {
      return std::unexpected("column \"" + reader->choice_.leaf.path + "\": " + codec.error());
    }
  }
  reader->rows_ = reader->meta_.num_rows;
  return reader;
}

std::string ParquetFileReader::Where() const {
  return "row group " + std::to_string(group_) + ", column \"" + choice_.leaf.path + "\": ";
}

std::expected<void, std::string> ParquetFileReader::LoadRowGroup() {
  const RowGroupMeta& group = meta_.row_groups[group_];
  const ColumnChunkMeta& column = group.columns[choice_.leaf.index];
  group_open_ = true;
  group_rows_read_ = 0;
  entry_ = value_ = 0;
  // A flat column has one value per row, so a chunk counting others cannot place them.
  if (choice_.leaf.max_repetition == 0 && column.num_values != group.num_rows) {
    LoseRestOfGroup("the column chunk has " + std::to_string(column.num_values) +
                    " values for the row group's " + std::to_string(group.num_rows) + " rows");
    return {};
  }
  int64_t start = column.data_page_offset;
  if (column.dictionary_page_offset && *column.dictionary_page_offset > 0 &&
      *column.dictionary_page_offset < start) {
    start = *column.dictionary_page_offset;
  }
  // The footer is intact, so a chunk reaching into it or past the end of the file
  // is known to be damaged before any of it is read: its pages that lie wholly
  // before the footer are read, the rows after them are lost.
  std::string past_end;
  int64_t size = column.total_compressed_size;
  if (start < kMagicBytes || size < 0 || start >= data_end_ || size > data_end_ - start) {
    past_end = "the chunk at bytes " + std::to_string(start) + ".." +
               std::to_string(start + size) + " extends past the data area (which ends at byte " +
               std::to_string(data_end_) + "): the file is truncated or damaged";
    if (start < kMagicBytes || size < 0 || start >= data_end_) {
      LoseRestOfGroup(past_end);
      return {};
    }
    size = data_end_ - start;
  }
  std::vector<uint8_t> bytes(size);
  if (auto read = PreadAll(fd_.get(), bytes.data(), bytes.size(), start, "column chunk"); !read) {
    return std::unexpected(Where() + read.error());
  }
  chunk_ = std::make_unique<ColumnChunkReader>(std::move(bytes), column, choice_.leaf);
  chunk_note_ = past_end.empty() ? "" : past_end + "; ";
  return {};
}

void ParquetFileReader::LoseRestOfGroup(const std::string& why) {
  chunk_.reset();
  damaged_rows_ = meta_.row_groups[group_].num_rows - group_rows_read_;
  damage_ = "damaged Parquet data: " + Where() + why;
}

ParquetRow* ParquetFileReader::NextDamagedRow() {
  --damaged_rows_;
  row_.row = group_first_row_ + group_rows_read_++;
  row_.null = row_.null_element = false;
  row_.text = {};
  row_.ids.clear();
  row_.damage = damage_;
  return &row_;
}

std::expected<ParquetFileReader::EntryState, std::string> ParquetFileReader::HasEntry(
    bool inside_row) {
  while (entry_ >= chunk_->entries()) {
    auto page = chunk_->NextPage();
    if (page) {
      if (!*page) return EntryState::kChunkEnd;
      entry_ = value_ = 0;
      continue;
    }
    const PageError& error = page.error();
    if (error.kind == PageError::Kind::kUnsupported) {
      return std::unexpected(Where() + error.message);
    }
    entry_ = value_ = 0;
    if (error.kind == PageError::Kind::kPageDamaged && choice_.leaf.max_repetition == 0) {
      // One entry per row: the page's rows are known, the next page goes on.
      const int64_t left = meta_.row_groups[group_].num_rows - group_rows_read_;
      damaged_rows_ = std::min(error.entries, left);
      damage_ = "damaged Parquet data: " + Where() + chunk_note_ + error.message;
      return EntryState::kDamaged;
    }
    // A list's rows cannot be told from entries that were not read.
    if (inside_row) --group_rows_read_;
    LoseRestOfGroup(chunk_note_ + error.message);
    return EntryState::kDamaged;
  }
  return EntryState::kEntry;
}

std::expected<std::optional<ParquetRow*>, std::string> ParquetFileReader::Next(
    const RowGroupFilter& wanted) {
  if (!error_.empty()) return std::unexpected(error_);
  auto fail = [&](std::string message) {
    error_ = std::move(message);
    chunk_.reset();
    return std::unexpected(error_);
  };
  row_.damage = {};
  while (true) {
    if (damaged_rows_ > 0) return NextDamagedRow();
    if (!group_open_) {
      if (group_ == meta_.row_groups.size()) return std::nullopt;
      const int64_t group_rows = meta_.row_groups[group_].num_rows;
      if (group_rows == 0 ||
          (wanted && !wanted(group_first_row_, group_first_row_ + group_rows - 1))) {
        group_first_row_ += group_rows;
        ++group_;
        continue;
      }
      if (auto loaded = LoadRowGroup(); !loaded) return fail(loaded.error());
      continue;
    }
    const int64_t expected = meta_.row_groups[group_].num_rows;
    if (chunk_ == nullptr) {  // every row of the group returned, read or damaged
      group_open_ = false;
      group_first_row_ += expected;
      ++group_;
      continue;
    }
    auto state = HasEntry(/*inside_row=*/false);
    if (!state) return fail(state.error());
    if (*state == EntryState::kDamaged) continue;
    if (*state == EntryState::kChunkEnd) {
      if (group_rows_read_ != expected) {
        LoseRestOfGroup(chunk_note_ + "the column chunk ends after " +
                        std::to_string(group_rows_read_) + " of the footer's " +
                        std::to_string(expected) + " rows");
      }
      chunk_.reset();
      continue;
    }
    if (group_rows_read_ == expected) {
      return fail(Where() + "chunk holds more rows than the footer's " +
                  std::to_string(group_rows_read_));
    }
    if (choice_.token_list && chunk_->repetition_levels()[entry_] != 0) {
      LoseRestOfGroup(chunk_note_ + "a row starts with repetition level " +
                      std::to_string(chunk_->repetition_levels()[entry_]));
      continue;
    }
    auto row = ReadRow();
    if (!row) return fail(row.error());
    if (*row) return &row_;
  }
}

std::expected<bool, std::string> ParquetFileReader::ReadRow() {
  const auto& definition = chunk_->definition_levels();
  const int max_definition = choice_.leaf.max_definition;
  row_.row = group_first_row_ + group_rows_read_++;
  row_.null = row_.null_element = false;
  row_.text = {};
  row_.ids.clear();
  if (!choice_.token_list) {
    row_.null = max_definition > 0 && definition[entry_] < static_cast<uint32_t>(max_definition);
    if (!row_.null) row_.text = chunk_->strings()[value_++];
    ++entry_;
    return true;
  }
  // A list's entries run until the next entry with repetition level 0, which may
  // be on a later page.
  while (true) {
    const uint32_t level = max_definition > 0 ? chunk_->definition_levels()[entry_] : 0;
    if (level < static_cast<uint32_t>(choice_.null_below)) {
      row_.null = true;
    } else if (level < static_cast<uint32_t>(choice_.empty_below)) {
      // an empty list: nothing to add
    } else if (level < static_cast<uint32_t>(max_definition)) {
      row_.null_element = true;
    } else {
      row_.ids.push_back(chunk_->integers()[value_++]);
    }
    ++entry_;
    auto more = HasEntry(/*inside_row=*/true);
    if (!more) return std::unexpected(more.error());
    // The row in progress was lost with the damaged page: it comes back as damaged.
    if (*more == EntryState::kDamaged) return false;
    if (*more == EntryState::kChunkEnd || chunk_->repetition_levels()[entry_] == 0) break;
  }
  return true;
}

}  // namespace actex::parquet
