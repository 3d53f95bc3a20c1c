#ifndef ACTEX_STORAGE_OUTPUT_VERIFIER_INTERNAL_H_
#define ACTEX_STORAGE_OUTPUT_VERIFIER_INTERNAL_H_

// The verifier behind VerifyOutput, shared by its two files: output_verifier.cc (the
// job: the corpus, its coverage, the job's latents) and output_verifier_folder.cc (each
// host folder: its shards, chunks, examples and uploads). Nothing else includes it.

#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "storage/document_tally.h"
#include "storage/job_folders.h"
#include "storage/output_verifier.h"
#include "storage/uploaded_shards.h"

namespace actex::output_verifier_internal {

// Per listed chunk of a folder, how many of its documents were seen there (written
// or rejected), and the chunks of shards that could not be read.
struct ChunkAnswers {
  std::map<int64_t, int64_t> documents;
  std::set<int64_t> unread;
  void Unread(const ShardEntry& shard) { unread.insert(shard.chunks.begin(), shard.chunks.end()); }
};

class Verifier {
 public:
  explicit Verifier(const VerifyOptions& options)
      : options_(options), unexpected_(options.listed_ids) {}

  std::expected<VerifyReport, std::string> Run();

 private:
  void CountCorpus();
  // Each folder's listed chunk digests against the corpus read now (folder_digests.h).
  void CheckCorpusDigests();
  void CheckFolder(JobFolder& folder);
  // Records the documents inferred for the folder's listed shard `index`, uploaded
  // and deleted locally, as seen in tally source `source`; `rejected` (sorted) holds
  // the folder's rejected ids inside its deleted shards' ranges.
  void RecordDeletedShard(const JobFolder& folder, size_t index, int source,
                          const std::vector<int64_t>& rejected, ChunkAnswers* answered);
  // Every document of the folder's shard `index` must be of a chunk the shard lists;
  // counts them per chunk in `answered`.
  void CheckShardChunks(const OutputFolder& output, size_t index,
                        const std::vector<int64_t>& documents, ChunkAnswers* answered);
  // The shard's latent examples file (examples_check.h), recomputed from the shard when
  // it is `shard_whole`; missing, a fault unless uploads.jsonl vouches for its deletion.
  void CheckExamples(const std::string& label, const ShardEntry& shard,
                     const FolderUploads& uploads, bool shard_whole);
  // A listed chunk is whole: each of its documents is written or rejected in this
  // folder. Chunks of a shard that could not be read are faulted as that shard.
  void CheckChunksWhole(const OutputFolder& output, const ChunkAnswers& answered);
  // One occurrence of `doc_id` in `folder`, seen in `place` (tally source `source`).
  void Record(const JobFolder& folder, int64_t doc_id, int source, const std::string& place);
  void CheckCoverage();
  // OUT/latents.safetensors against the host folders' latent examples.
  void CheckJobLatents();
  void Fault(std::string file, std::string problem) {
    report_.faults.push_back({std::move(file), std::move(problem)});
  }

  const VerifyOptions& options_;
  VerifyReport report_;
  JobFolders found_;
  std::optional<DocumentTally> tally_;
  std::vector<std::string> corpus_inputs_;  // as CountCorpus read them
  IdSample unexpected_;
};

}  // namespace actex::output_verifier_internal

#endif  // ACTEX_STORAGE_OUTPUT_VERIFIER_INTERNAL_H_
