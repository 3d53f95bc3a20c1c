#ifndef ACTEX_STORAGE_OUTPUT_FOLDER_H_
#define ACTEX_STORAGE_OUTPUT_FOLDER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "storage/chunk_rule.h"
#include "storage/shard_check.h"

namespace actex {

// Internals of the output verifier (storage/output_verifier.h): one host folder's
// metadata.json, its rejects.jsonl and the files nothing lists.

// A problem, named by the file it is in (relative to the verified folder).
struct VerifyFinding {
  std::string file;
  std::string problem;
};

struct OutputFolder {
  std::string path;       // on disk
  std::string label;      // in messages: "host_00", "machine_001_host_00"
  nlohmann::json config;  // metadata.json "config"
  bool complete = false;
  std::vector<std::string> shard_files;     // as listed, in order
  std::vector<ShardEntry> shards;           // same order
  int64_t docs = 0, tokens = 0, bytes = 0;  // sums over the listing
  // Whether the shards list their chunks (outputs older than whole-chunk shards do
  // not), and then every chunk listed: chunk -> documents it has, cut by `chunk_rule`.
  bool lists_chunks = false;
  std::map<int64_t, int64_t> chunks;
  std::map<int64_t, std::string> chunk_digests;  // of the chunks listed with one
  ChunkRule chunk_rule;  // config "chunk_docs"; older outputs dealt single documents
};

// Reads and checks `path`/metadata.json: format "actex-activations" version 1, the
// dtype and sites, every shard entry complete and well-formed (a plain file name
// shard_*.safetensors[.gz], counts, an 8-hex-digit crc32, doc ids in order) and the
// totals equal to the listing. Adds a finding for every fault; nullopt when the file
// cannot be used at all (missing, not JSON, another format or version).
std::optional<OutputFolder> ReadOutputFolder(const std::string& path, const std::string& label,
                                             std::vector<VerifyFinding>* faults);

// Files of the folder that metadata.json does not list, other than rejects.jsonl
// and uploads.jsonl: *.tmp left by an interrupted write (safe to delete), shard
// files (each said whole or not: left by a run that stopped before listing them,
// or the only copy of documents whose entry was lost, so never called safe to
// delete), the unlisted/ folder a resume set such shards aside in, and anything
// else. They are warnings, not faults.
std::vector<VerifyFinding> FindUnlistedFiles(const OutputFolder& folder);

// Calls `document(doc_id)` for every entry of the folder's rejects.jsonl (absent:
// none) and adds a finding for every line that is not {"doc_id", "file", "line",
// "reason"}. Returns the number of entries read.
int64_t ReadRejects(const OutputFolder& folder, const std::function<void(int64_t)>& document,
                    std::vector<VerifyFinding>* faults);

}  // namespace actex

#endif  // ACTEX_STORAGE_OUTPUT_FOLDER_H_
