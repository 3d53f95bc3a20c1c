#ifndef ACTEX_STORAGE_DOCUMENT_TALLY_H_
#define ACTEX_STORAGE_DOCUMENT_TALLY_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace actex {

// Internals of the output verifier (storage/output_verifier.h): which corpus
// documents an output holds, and where.

// The number of documents (lines) of the corpus `inputs` names, numbered exactly as
// CorpusReader numbers them (glob expansion, gzip by magic bytes, a last line
// without '\n' counts), without parsing any line; counting stops at `limit` when it
// is >= 0 (a Parquet file counts the rows its footer gives). Errors are
// CorpusReader's: a missing file, a pattern matching nothing,
// a truncated gzip stream.
std::expected<int64_t, std::string> CountCorpusDocuments(const std::vector<std::string>& inputs,
                                                         int64_t limit);

// The smallest `capacity` ids added, each with the notes added for it (where it was
// seen); keeps a report short whatever the number of faults.
class IdSample {
 public:
  explicit IdSample(size_t capacity) : capacity_(capacity) {}
  void Add(int64_t id, const std::string& note);
  const std::map<int64_t, std::vector<std::string>>& ids() const { return ids_; }

 private:
  size_t capacity_;
  std::map<int64_t, std::vector<std::string>> ids_;
};

struct CoverageCounts {
  int64_t documents = 0;  // expected documents
  int64_t written = 0, rejected = 0, missing = 0, pending = 0, duplicated = 0;
};

// For every document id below the corpus size: the place it was first seen (a
// shard, or a rejects.jsonl) and whether it was seen again. Four bytes a document.
class DocumentTally {
 public:
  DocumentTally(int64_t corpus_documents, size_t listed_ids);

  // A place documents are seen in; `rejected` for a rejects.jsonl. Returns its index.
  int AddSource(std::string name, bool rejected);
  // One occurrence; the caller keeps `doc_id` in [0, corpus_documents).
  void Record(int64_t doc_id, int source);

  // Classifies every document `expected` says the output must hold: written or
  // rejected exactly once, duplicated, or absent: `pending` when `excused` (its
  // folder's run is unfinished), else missing.
  CoverageCounts Count(const std::function<bool(int64_t)>& expected,
                       const std::function<bool(int64_t)>& excused, IdSample* missing) const;
  // Duplicated documents with every place they were seen.
  const IdSample& duplicated() const { return duplicated_; }
  int64_t corpus_documents() const { return static_cast<int64_t>(first_seen_.size()); }

 private:
  static constexpr uint32_t kSeenAgain = uint32_t{1} << 31;
  std::vector<uint32_t> first_seen_;  // source + 1, 0: never; | kSeenAgain
  std::vector<std::pair<std::string, bool>> sources_;
  IdSample duplicated_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_DOCUMENT_TALLY_H_
