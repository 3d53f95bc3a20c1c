#ifndef ACTEX_STORAGE_OUTPUT_VERIFIER_H_
#define ACTEX_STORAGE_OUTPUT_VERIFIER_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/document_tally.h"
#include "storage/job_folders.h"

namespace actex {

struct VerifyOptions {
  // An extraction's output: host folders (host_NN, machine_MMM_host_NN) below it,
  // or one host folder itself (then only that folder's documents are expected).
  std::string out_dir;
  // Corpus inputs (files or globs, in order) when they moved since the run; empty:
  // the "data" every folder's config names (they must agree).
  std::vector<std::string> data;
  // "complete": false is then not a fault, and documents an unfinished folder has
  // not reached yet are counted as pending rather than missing.
  bool allow_incomplete = false;
  size_t listed_ids = 20;  // ids listed per class of coverage fault
  // Empty: all folders form one job that owns every document of the corpus.
  FolderRoleRule role;
};

struct FolderSummary {
  std::string label;
  bool complete = false;
  int64_t shards = 0, docs = 0, tokens = 0, bytes = 0, rejected = 0;
  // Listed shards missing locally that uploads.jsonl records as uploaded with the
  // listed bytes and crc32 and then deleted (--delete-after-upload): not re-read.
  int64_t uploaded_deleted = 0;
};

struct VerifyReport {
  std::vector<FolderSummary> folders;
  std::vector<VerifyFinding> faults;  // each makes the output unusable as it is
  // Unlisted leftovers of an interrupted run, and shards uploaded and deleted
  // locally (checked against the listing only through uploads.jsonl).
  std::vector<VerifyFinding> warnings;
  bool coverage_checked = false;  // the corpus could be read
  CoverageCounts coverage;
  // Samples (smallest ids) of each coverage fault, with where they were seen.
  std::map<int64_t, std::vector<std::string>> missing_ids, duplicated_ids, unexpected_ids;
  int64_t unexpected = 0;         // occurrences outside the corpus or outside their folder's share
  int64_t shards = 0, bytes = 0;  // listed in every folder's metadata.json
  int64_t uploaded_deleted = 0;   // of those shards: uploaded and deleted locally

  bool clean() const { return faults.empty(); }
  // "verified N documents: W written, R rejected, M missing, D duplicated; S shards, B bytes",
  // then " (U shards uploaded and deleted locally, not re-read)" when there are any.
  std::string Summary() const;
};

// Re-reads everything an extraction wrote below options.out_dir and checks it
// against the metadata.json of every host folder and against the corpus:
// * each folder's metadata.json (format, version, listing, totals; "complete");
// * each listed shard: size and CRC-32 as stored, safetensors header, site tensors
//   and id tensors, doc ids whole and as listed, positions 0..n-1 (CheckShard);
// * a listed shard missing locally is a fault unless the folder's uploads.jsonl
//   records it uploaded with the listed bytes and crc32 and then deleted: then it is
//   a warning, not re-read, and its documents are inferred from its listing (every
//   doc id of its range in the folder's share and not in its rejects.jsonl), which
//   must give its listed "docs";
// * uploads.jsonl well-formed (a torn last line is ignored);
// * each folder's listed chunk digests against the corpus read again
//   (FindChangedChunks): a chunk that reads otherwise now is a fault (older
//   outputs list no digests and are not compared);
// * files nothing lists (warnings, not faults);
// * coverage: the corpus's lines are counted as CorpusReader numbers them (no line
//   is parsed), honouring the config's max_docs, and every document some folder
//   answers for must be written exactly once over all folders, or listed in exactly
//   one rejects.jsonl: missing, duplicated (written twice, written and rejected,
//   rejected twice) and unexpected ones (beyond the corpus, or in a folder whose
//   share it is not) are faults.
// Every fault is reported, not only the first. Memory: four bytes per corpus
// document plus the doc ids of one shard, plus eight bytes per rejected document
// inside the ranges of deleted shards. Fails only when there is nothing to
// verify (out_dir is not a directory or holds no host folder).
std::expected<VerifyReport, std::string> VerifyOutput(const VerifyOptions& options);

}  // namespace actex

#endif  // ACTEX_STORAGE_OUTPUT_VERIFIER_H_
