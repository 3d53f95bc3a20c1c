#include "storage/parquet_corpus_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "storage/file_io.h"
#include "base/utf8.h"

namespace actex {

std::expected<bool, std::string> IsParquetInput(const std::string& path) {
  constexpr std::string_view kSuffix = ".parquet";
  if (path.size() >= kSuffix.size() && path.ends_with(kSuffix)) return true;
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::unexpected(OsError("cannot open", path, errno));
  char head[4] = {};
  ssize_t got;
  do {
    got = ::pread(fd.get(), head, sizeof head, 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return std::unexpected(OsError("cannot read", path, errno));
  return got == 4 && std::memcmp(head, "PAR1", 4) == 0;
}

std::expected<std::unique_ptr<ParquetCorpusFile>, std::string> ParquetCorpusFile::Open(
    const std::string& path, const CorpusOptions& options, int64_t first_doc_id) {
  auto reader = parquet::ParquetFileReader::Open(path, options.text_field);
  if (!reader) return std::unexpected("parquet file " + path + ": " + reader.error());
  std::unique_ptr<ParquetCorpusFile> file(new ParquetCorpusFile());
  file->path_ = path;
  file->options_ = &options;
  file->first_doc_id_ = first_doc_id;
  file->reader_ = std::move(*reader);
  return file;
}

std::expected<std::optional<CorpusRecord>, std::string> ParquetCorpusFile::Next() {
  parquet::ParquetFileReader::RowGroupFilter wanted;
  if (options_->wants_docs) {
    wanted = [this](int64_t first_row, int64_t last_row) {
      return options_->wants_docs(first_doc_id_ + first_row, first_doc_id_ + last_row);
    };
  }
  auto row = reader_->Next(wanted);
  if (!row) return std::unexpected("parquet file " + path_ + ": " + row.error());
  if (!*row) return std::nullopt;
  CorpusRecord record;
  Fill(***row, &record);
  return record;
}

void ParquetCorpusFile::Fill(const parquet::ParquetRow& row, CorpusRecord* record) const {
  record->doc_id = first_doc_id_ + row.row;
  record->file = path_;
  record->line = row.row + 1;
  if (!row.damage.empty()) {
    record->reject_reason = row.damage;
    return;
  }
  if (reader_->column().token_list) {
    constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();
    if (row.null) {
      record->reject_reason = "input_ids is null";
      return;
    }
    // Each id may take 5 bytes in the message carrying the document.
    const auto max_ids = static_cast<size_t>(options_->max_line_bytes / 5);
    if (row.ids.size() > max_ids) {
      record->reject_reason = "input_ids has " + std::to_string(row.ids.size()) +
                              " ids, more than " + std::to_string(max_ids);
      return;
    }
    bool valid = !row.null_element;
    for (size_t i = 0; valid && i < row.ids.size(); ++i)
      valid = row.ids[i] >= 0 && row.ids[i] <= kMaxId;
    if (!valid) {
      record->reject_reason = "input_ids must be an array of non-negative integers";
    } else if (row.ids.empty()) {
      record->reject_reason = "input_ids is empty";
    } else {
      record->pretokenized = true;
      record->input_ids.assign(row.ids.begin(), row.ids.end());
    }
    return;
  }
  const std::string& field = options_->text_field;
  if (row.null) {
    record->reject_reason = "field \"" + field + "\" is null";
  } else if (row.text.empty()) {
    record->reject_reason = "field \"" + field + "\" is empty";
  } else if (static_cast<int64_t>(row.text.size()) > options_->max_line_bytes) {
    record->reject_reason = "text longer than " + std::to_string(options_->max_line_bytes) +
                            " bytes (" + std::to_string(row.text.size()) + ")";
  } else if (auto bad = FirstInvalidUtf8Byte(row.text)) {
    record->reject_reason = "not valid UTF-8 at byte " + std::to_string(*bad);
  } else {
    record->text.assign(row.text);
  }
}

}  // namespace actex
