#ifndef ACTEX_STORAGE_SHUFFLED_OUTPUT_H_
#define ACTEX_STORAGE_SHUFFLED_OUTPUT_H_

#include <cstdint>
#include <expected>
#include <string>
#include <utility>
#include <vector>

namespace actex {

// What `actex shuffle` writes (storage/activation_shuffle.h) and how it is checked.
//
// SHUFFLED/metadata.json: {"format": "actex-shuffled", "version": 1, "complete",
// "source": the source folder, "parameters": {"source_shards": [{file, bytes,
// crc32, tokens}], "seed", "rows_per_file", "sites": [{name, width}], "dtype",
// "skip_token_ids"}, "rows", "skipped", "files": [{index, file, rows, bytes,
// crc32}], "totals": {rows, files, bytes}}; files shuffled_000001.safetensors ...
// hold the chosen sites [rows, width] in "dtype" plus token_ids I32, doc_ids I64,
// positions I32 [rows].
inline constexpr const char* kShuffledFormat = "actex-shuffled";

// "shuffled_000001.safetensors" for index 0.
std::string ShuffledFileName(int64_t index);

// "float32", "float16", "bfloat16" for "F32", "F16", "BF16"; and back ("" if unknown).
std::string DtypeName(const std::string& dtype);
std::string DtypeFromName(const std::string& name);

// Size and CRC-32 of a file, read in 1 MiB pieces.
std::expected<std::pair<int64_t, uint32_t>, std::string> FileCrc32(const std::string& path);

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

// True when `dir`/metadata.json is a shuffle's.
bool IsShuffledOutput(const std::string& dir);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLED_OUTPUT_H_
