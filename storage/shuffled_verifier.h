#ifndef ACTEX_STORAGE_SHUFFLED_VERIFIER_H_
#define ACTEX_STORAGE_SHUFFLED_VERIFIER_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace actex {

// What `actex verify` found in a shuffle's folder (storage/shuffled_output.h says
// what the folder holds).
struct ShuffledCheck {
  std::vector<std::string> faults;  // each names its file, or the row by doc id and position
  int64_t rows = 0, files = 0, bytes = 0, source_rows = 0, skipped = 0;
  // "verified R rows in F files (B bytes) against S source rows (K skipped): ..."
  std::string Summary() const;
};

// Checks a shuffle's output against its source (`source_dir`, or the folder its
// metadata.json names): metadata complete and consistent, every file's size,
// crc32 and tensors as listed, and every source row whose token is not skipped
// present exactly once with equal values (sites compared in the shuffle's dtype
// through a 64-bit SipHash of the row, token id, doc id and position; rows are
// matched by doc id and position). Memory: 9 bytes per source row plus 24 per
// document. A fault of the shuffle's own files, its metadata.json included
// (malformed, another version, fields missing), is a fault in the result; it fails
// (`actex verify` exit 2) only when the check cannot be made: metadata.json
// unreadable, or the source missing, unreadable, changed since the shuffle or
// holding a document twice.
std::expected<ShuffledCheck, std::string> VerifyShuffled(const std::string& dir,
                                                         const std::string& source_dir);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLED_VERIFIER_H_
