#ifndef ACTEX_STORAGE_CORPUS_SIZE_H_
#define ACTEX_STORAGE_CORPUS_SIZE_H_

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "storage/corpus_reader.h"

namespace actex {

// What is known of a corpus before reading it: Parquet footers give their row
// counts, JSONL files only their bytes (so progress through them is bytes read /
// bytes in all).
struct CorpusSize {
  int64_t parquet_files = 0, parquet_rows = 0;
  int64_t jsonl_files = 0, jsonl_bytes = 0;
  // The number of documents, when every file is Parquet.
  std::optional<int64_t> documents() const {
    return jsonl_files == 0 ? std::optional<int64_t>(parquet_rows) : std::nullopt;
  }
  // The documents in the whole corpus as far as `progress` tells: exact for the
  // Parquet rows, and for JSONL the documents read so far scaled by the bytes in
  // all JSONL files over the bytes read (exact once every byte was read).
  // std::nullopt while JSONL files exist and none of their bytes were read.
  std::optional<int64_t> EstimateDocuments(const CorpusProgress& progress) const;
  nlohmann::json ToJson() const;
};

// Measures `files` (as CorpusReader expanded them) reading only Parquet footers and
// file sizes. A Parquet file that is not valid or lacks the column (`text_field`,
// or input_ids) is refused here, before any work, naming the file and the column.
std::expected<CorpusSize, std::string> MeasureCorpus(const std::vector<std::string>& files,
                                                     const std::string& text_field);

}  // namespace actex

#endif  // ACTEX_STORAGE_CORPUS_SIZE_H_
