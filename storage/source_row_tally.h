#ifndef ACTEX_STORAGE_SOURCE_ROW_TALLY_H_
#define ACTEX_STORAGE_SOURCE_ROW_TALLY_H_

#include <cstdint>
#include <expected>
#include <set>
#include <string>
#include <vector>

#include "storage/shuffle_rows.h"

namespace actex {

// Internals of the shuffle's verifier (storage/shuffled_verifier.h): every row of the
// source output, found by doc id and position, with a 64-bit SipHash of its record and
// whether a shuffled row has matched it. Memory: 9 bytes per source row plus 24 per
// document.
class SourceRowTally {
 public:
  // Reads every row of `source` once as records of `layout`; a row whose token is one of
  // `skip_ids` is expected in no shuffled file. A gzip'd shard is inflated into
  // `scratch_path` on the way. Fails, naming the source, when a shard cannot be read or
  // the source holds a document twice.
  static std::expected<SourceRowTally, std::string> Read(const SourceOutput& source,
                                                         const RecordLayout& layout,
                                                         const std::set<int32_t>& skip_ids,
                                                         const std::string& scratch_path);

  // Source rows read, and how many of them are of skipped tokens.
  int64_t rows() const { return rows_; }
  int64_t skipped() const { return skipped_; }

  // Matches one shuffled record of `layout` (read from `file`) to its source row by doc
  // id and position: the first match marks the row seen and compares the hashes; a
  // record with no source row, of a skipped token, seen before, or with other values
  // is a fault of its kind.
  void Match(const uint8_t* record, const std::string& file);

  // Appends one line per kind of fault that Match found, then the source rows no
  // record matched (their tokens not skipped) as missing. Call once, after every Match.
  void ReportFaults(std::vector<std::string>* faults) const;

 private:
  enum class RowState : uint8_t { kUnseen, kSeen, kSkipped };
  struct DocumentRows {
    int64_t doc_id = 0, first_row = 0, tokens = 0;
    bool operator<(const DocumentRows& other) const { return doc_id < other.doc_id; }
  };
  // Faults of one kind: the first few spelled out, the rest counted.
  struct FaultClass {
    std::string what;
    std::vector<std::string> examples{};
    int64_t count = 0;
    void Add(const std::string& where);
    void Report(std::vector<std::string>* faults) const;
  };

  SourceRowTally(const RecordLayout& layout, int64_t rows);
  // The source row of `doc_id` at `position`, or -1 when the source has none.
  int64_t Find(int64_t doc_id, int64_t position) const;

  RecordLayout layout_;
  std::vector<DocumentRows> documents_;  // sorted by doc id once read, each once
  std::vector<uint64_t> hashes_;         // [rows]
  std::vector<RowState> states_;         // [rows]
  int64_t rows_ = 0, skipped_ = 0;
  FaultClass foreign_{"rows that are no source row"};
  FaultClass skipped_rows_{"rows of skipped tokens"};
  FaultClass duplicated_{"rows written more than once"};
  FaultClass differing_{"rows whose values differ from their source row"};
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SOURCE_ROW_TALLY_H_
