#ifndef ACTEX_STORAGE_CORPUS_RECORD_H_
#define ACTEX_STORAGE_CORPUS_RECORD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

// What the corpus reader (corpus_reader.h) is asked and what it hands out, one record
// per document, whichever file format (JSONL, gzip'd JSONL, Parquet) holds it.

namespace actex {

// The longest line (or Parquet text) read as a document by default. A document
// travels whole in one message from the loader to the tokenizer, so this stays
// below the transport's message body limit (actors/node.cc checks it at compile
// time); a longer line is a rejected document, never a failed send.
inline constexpr int64_t kDefaultMaxLineBytes = int64_t{48} << 20;

struct CorpusOptions {
  std::vector<std::string> inputs;  // files or globs, in the order given
  std::string text_field = "text";
  int64_t max_docs = -1;  // stop before doc id max_docs; -1: all
  // Longer lines are rejected, never buffered whole; a Parquet row with more than
  // max_line_bytes / 5 token ids (5: the most bytes one takes in a message) too.
  int64_t max_line_bytes = kDefaultMaxLineBytes;
  // When set, a Parquet row group none of whose doc ids [first, last] it wants is
  // passed over without being read (resume, --machine-id): no records for them.
  std::function<bool(int64_t first_doc_id, int64_t last_doc_id)> wants_docs = nullptr;
};

// One line of the corpus. Its doc_id is its 0-based position in the concatenation
// of all input files, so a rejected line still uses up its id and ids never shift.
struct CorpusRecord {
  int64_t doc_id = 0;
  std::string file;
  int64_t line = 0;  // 1-based; a Parquet file's 1-based row
  bool pretokenized = false;
  std::string text;                // when !pretokenized
  std::vector<int32_t> input_ids;  // when pretokenized ("input_ids": [...])
  std::string reject_reason;       // non-empty: the line is skipped, for this reason
};

}  // namespace actex

#endif  // ACTEX_STORAGE_CORPUS_RECORD_H_
