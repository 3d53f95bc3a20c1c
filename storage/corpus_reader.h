#ifndef ACTEX_STORAGE_CORPUS_READER_H_
#define ACTEX_STORAGE_CORPUS_READER_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/corpus_record.h"

namespace actex {

// How far reading has come. A JSONL file's documents are known only once read, so
// progress through them is measured in bytes (see EstimateDocuments).
struct CorpusProgress {
  int64_t next_doc_id = 0;  // documents read or passed over, in all files
  int64_t jsonl_docs = 0;   // of which in JSONL files
  int64_t jsonl_bytes = 0;  // bytes of JSONL files read from disk (compressed for gzip)
};

// Streams JSONL, JSONL.gz and Parquet files one record at a time. The format is told
// by content (Parquet magic "PAR1", gzip magic, else JSONL), except that a file
// named *.parquet must be Parquet. A Parquet file gives one record per row of its
// text column (or its `input_ids` list column; see storage/parquet/column_choice.h).
// Only an unreadable input (missing file, glob matching nothing, truncated gzip
// stream, a file that is not valid Parquet or lacks the column, a Parquet encoding
// not supported, a read error) is an error; a bad line or row becomes a record with
// reject_reason set, and so does each row of a damaged Parquet page or column
// chunk (the footer's row counts keep every other row's id).
// A truncated or corrupt gzip stream is an error rather than a reject because
// nothing after the damage can be read and doc ids past it would be guesses; the
// records before it have been delivered, the partial line at the cut is not.
// A pattern's matches are sorted bytewise; each input must match something. Reject
// reasons: "blank line", "line longer than N bytes (M)", "not valid UTF-8 at byte
// K", "invalid JSON: <parser message>", "line is not a JSON object", "missing
// field \"text\"", "field \"text\" is not a string", "field \"text\" is empty",
// "input_ids must be an array of non-negative integers", "input_ids is empty"; and
// for Parquet rows "field \"text\" is null", "input_ids is null", "text longer
// than N bytes (M)", "input_ids has M ids, more than N", and for the rows of a
// damaged Parquet page "damaged Parquet data: ...".
class CorpusReader {
 public:
  static std::expected<std::unique_ptr<CorpusReader>, std::string> Open(
      const CorpusOptions& options);

  // The next record, std::nullopt at the end of the last file.
  std::expected<std::optional<CorpusRecord>, std::string> Next();

  CorpusProgress progress() const;

  // The files the inputs expanded to, in reading order.
  const std::vector<std::string>& files() const;

  ~CorpusReader();

 private:
  CorpusReader();
  struct State;
  // Opens the next file as Parquet or JSONL.
  static std::expected<void, std::string> OpenFile(State& state);
  std::unique_ptr<State> state_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_CORPUS_READER_H_
