#ifndef ACTEX_STORAGE_EARLIER_OUTPUT_H_
#define ACTEX_STORAGE_EARLIER_OUTPUT_H_

#include <cstdint>
#include <expected>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "storage/chunk_rule.h"
#include "storage/upload_ledger.h"

namespace actex {

// What an earlier run left in a host folder, for resuming it.
struct EarlierOutput {
  nlohmann::json metadata;  // metadata.json as written
  bool complete = false;
  int64_t last_doc_id = -1;                     // of the last listed shard; -1 when none is listed
  std::map<int64_t, int64_t> chunks;            // listed: chunk -> documents it has
  std::set<std::string> listed_files;           // the listed shards' files and their examples files
  std::map<std::string, UploadRecord> uploads;  // uploads.jsonl, by file
};

// Reads `dir`/metadata.json; std::nullopt when the folder has none (a fresh run).
// Every listed shard (and latent examples file) must exist with its listed size (a listed shard was
// fsynced before it was listed, so anything else means the folder was damaged afterwards), unless
// uploads.jsonl says it was uploaded with its listed bytes and crc32 and then deleted; errors name
// the file. An output whose shards do not say which chunks they hold (written before shards held
// whole chunks) is refused. Every field a resume reads is type-checked here (CheckContinuable), so
// a damaged metadata.json is an error naming the file and the field, and `metadata` can be read as
// written.
std::expected<std::optional<EarlierOutput>, std::string> ReadEarlierOutput(const std::string& dir);

// Checks that `metadata` (read from `file`) has every field a resume reads, of the
// right type: "complete" true or false, "config" an object (or null), "shards" an array of
// objects with a string "file" and "crc32", integer "first_doc_id", "last_doc_id",
// "docs", "tokens", "bytes" and a "chunks" array; "chunks_without_documents"
// absent, null or an array; "statistics" absent, null, or an object of
// SiteStatistics. The error names the file and the field.
std::expected<void, std::string> CheckContinuable(const nlohmann::json& metadata,
                                                  const std::string& file);

// Keeps only the lines of `path` (rejects.jsonl) whose "doc_id" lies in one of the
// `listed` chunks (cut by `chunks`), replacing the file atomically; a
// missing file is fine. The others were logged by a run that stopped before it
// listed their chunk, which is computed again.
std::expected<void, std::string> KeepRejectsOfListedChunks(const std::string& path,
                                                           const std::set<int64_t>& listed,
                                                           ChunkRule chunks);

}  // namespace actex

#endif  // ACTEX_STORAGE_EARLIER_OUTPUT_H_
