#ifndef ACTEX_STORAGE_SHUFFLED_OUTPUT_H_
#define ACTEX_STORAGE_SHUFFLED_OUTPUT_H_

#include <cstdint>
#include <expected>
#include <string>
#include <utility>

namespace actex {

// What `actex shuffle` writes (storage/activation_shuffle.h); storage/shuffled_verifier.h
// checks it.
//
// SHUFFLED/metadata.json: {"format": "actex-shuffled", "version": 1, "complete",
// "source": the source folder, "parameters": {"source_shards": [{file, bytes,
// crc32, tokens}], "seed", "rows_per_file", "sites": [{name, width[, "dtype": "I32"]}]
// (storage/stored_site.h), "dtype", "skip_token_ids"}, "rows", "skipped", "files":
// [{index, file, rows, bytes, crc32}], "totals": {rows, files, bytes}}; files
// shuffled_000001.safetensors ... hold the chosen sites [rows, width] in "dtype" (an
// integer site in I32) plus token_ids I32, doc_ids I64, positions I32 [rows].
inline constexpr const char* kShuffledFormat = "actex-shuffled";

// "shuffled_000001.safetensors" for index 0.
std::string ShuffledFileName(int64_t index);

// "float32", "float16", "bfloat16" for "F32", "F16", "BF16"; and back ("" if unknown).
std::string DtypeName(const std::string& dtype);
std::string DtypeFromName(const std::string& name);

// Size and CRC-32 of a file, read in 1 MiB pieces.
std::expected<std::pair<int64_t, uint32_t>, std::string> FileCrc32(const std::string& path);

// True when `dir`/metadata.json is a shuffle's.
bool IsShuffledOutput(const std::string& dir);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLED_OUTPUT_H_
