#ifndef ACTEX_STORAGE_PARQUET_CORPUS_FILE_H_
#define ACTEX_STORAGE_PARQUET_CORPUS_FILE_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "storage/corpus_record.h"
#include "storage/parquet/parquet_file_reader.h"

namespace actex {

// Whether `path` is read as Parquet: it starts with the magic "PAR1" or is named
// *.parquet (such a file must be Parquet even when it is empty or damaged).
std::expected<bool, std::string> IsParquetInput(const std::string& path);

// One Parquet file of the corpus as CorpusRecords: doc id = the first doc id given
// plus the row's position in the file, `line` = the 1-based row. Errors name the
// file ("parquet file F: ...").
class ParquetCorpusFile {
 public:
  static std::expected<std::unique_ptr<ParquetCorpusFile>, std::string> Open(
      const std::string& path, const CorpusOptions& options, int64_t first_doc_id);

  // The next record, std::nullopt after the last row. Row groups whose doc ids
  // options.wants_docs declines are skipped unread.
  std::expected<std::optional<CorpusRecord>, std::string> Next();

  int64_t rows() const { return reader_->rows(); }

 private:
  ParquetCorpusFile() = default;
  void Fill(const parquet::ParquetRow& row, CorpusRecord* record) const;

  std::string path_;
  const CorpusOptions* options_ = nullptr;
  int64_t first_doc_id_ = 0;
  std::unique_ptr<parquet::ParquetFileReader> reader_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_PARQUET_CORPUS_FILE_H_
