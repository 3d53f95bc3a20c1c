#ifndef ACTEX_STORAGE_SHARD_WRITER_H_
#define ACTEX_STORAGE_SHARD_WRITER_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "storage/shard_writer_options.h"

namespace actex {

struct ShardWriterState;  // shard_writer_state.h

// Writes documents into shard_000001.safetensors, shard_000002..., each holding whole
// chunks of documents: tensors per site [tokens, width] in the output dtype, plus token_ids
// I32, doc_ids I64 and positions I32. Memory stays flat whatever the shard size:
// rows are spilled to temporary files and the shard is assembled on close under a
// temporary name, fsynced and renamed; then metadata.json (shards with first/last
// doc id, docs, tokens, bytes, crc32, plus run config) is replaced atomically.
// A shard not yet closed is never listed; an error (disk full) names the path and
// the OS error and leaves every listed shard valid. A chunk is listed whole or not at
// all, so whoever computes an unlisted chunk again forms the same batches.
//
// metadata.json lists each shard's crc32 as 8 lowercase hex digits of zlib's CRC-32
// of the file's bytes as stored (the compressed bytes for .gz). Spill files are
// unlinked as soon as they are created, so a crash leaves none behind.
class ShardWriter {
 public:
  // Creates options.dir if needed and writes a first metadata.json ("complete":
  // false, no shards). Refuses a directory that already has a metadata.json (an
  // earlier run's shards would be overwritten) unless options.continue_from holds it.
  static std::expected<std::unique_ptr<ShardWriter>, std::string> Open(ShardWriterOptions options);

  // Appends one document of the open chunk, or the first of a chunk not seen yet. A
  // document that does not fit the options (no tokens, a doc id not above the
  // previous one of its chunk, a chunk listed or ended already, or another chunk
  // while one is open, positions or site sizes not matching token count x width) is
  // refused and the writer goes on. A write error is final: every later call returns it.
  std::expected<void, std::string> Add(const DocumentActivations& document);
  // Every document of `chunk` that will come has come (`documents` is how many ids
  // the chunk has in the corpus, the rest of them rejected; `digest`, when not
  // empty, is listed with it: storage/chunk_digest.h); closes the shard once its
  // tensor bytes reach options.shard_bytes.
  std::expected<void, std::string> EndChunk(int64_t chunk, int64_t documents,
                                            const std::string& digest = "");
  // Lists every chunk that ended, closing the open shard early, without finishing:
  // a host of a leased job that waits for more work lists what it holds, so the job
  // can finish. Refused while a chunk is open.
  std::expected<void, std::string> ListEnded();
  // Lists what is whole and writes metadata.json with "complete": `complete` (false
  // when the input ended early, in an error or a drain). The documents of a chunk
  // that never ended are dropped: a later run computes that chunk again; with
  // `complete` that is an error (and the output is not complete).
  std::expected<void, std::string> Finish(bool complete = true);

  const ShardStats& stats() const;
  // The index-th listed shard, 0 <= index < stats().shards (an earlier run's included).
  ListedShard listed_shard(int64_t index) const;
  // The files the index-th listed shard's entry lists: the shard, then its latent
  // examples file when it has one (storage/shard_listing.h's ListedFilesOf).
  std::vector<ListedShard> listed_files(int64_t index) const;
  // Every chunk listed so far, an earlier run's included.
  const std::set<int64_t>& listed_chunks() const;
  ~ShardWriter();

 private:
  ShardWriter();
  std::unique_ptr<ShardWriterState> state_;
};

// Parses "1GB", "512MB", "64KB", "1000" (bytes); binary multiples (1KB = 1024).
std::expected<int64_t, std::string> ParseByteSize(const std::string& text);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_WRITER_H_
