#ifndef ACTEX_STORAGE_CHUNK_DIGEST_H_
#define ACTEX_STORAGE_CHUNK_DIGEST_H_

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/chunk_rule.h"
#include "storage/corpus_reader.h"

namespace actex {

// What one chunk of the corpus held when it was read: 32 lowercase hex digits, the
// BLAKE2b-128 digest of its records in doc id order. Each record adds its doc id and
// what the model was given: its text, its token ids, or only that it was rejected
// (not the reason's wording, so that a reworded reason changes no digest). The
// writer lists it with the chunk, so that a resume and `actex verify` can tell a
// corpus changed since (lines reordered, edited, replaced by a file of the same
// size) from the one the chunk's activations were computed from.
class ChunkDigest {
 public:
  ChunkDigest();
  ~ChunkDigest();
  ChunkDigest(ChunkDigest&&) noexcept;
  ChunkDigest& operator=(ChunkDigest&&) noexcept;

  // Starts a new chunk: forgets every record added.
  void Reset();
  void Add(const CorpusRecord& record);
  // The digest of the records added since the last Reset (adding may go on).
  std::string Hex() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A listed chunk whose records read differently now.
struct ChangedChunk {
  int64_t chunk = 0;
  std::string listed, now;  // digests; `now` is empty when the corpus ends before it
  // "lines 65-128 of data/a.jsonl" (or "... and rows 1-3 of b.parquet"): where it lies.
  std::string where;
};

// Reads the corpus `options` names from its start to the last chunk of `listed`
// (chunk -> digest, chunks cut by `chunks`) and returns the listed chunks
// whose records digest differently now, in chunk order. Parquet row groups holding
// no listed chunk are passed over unread. An error: the corpus cannot be read
// (CorpusReader's errors).
std::expected<std::vector<ChangedChunk>, std::string> FindChangedChunks(
    CorpusOptions options, ChunkRule chunks, const std::map<int64_t, std::string>& listed);

// One line for a user about `changed` (not empty) of the output `folder`: the first
// chunks and where they lie, how many there are, and what to do.
std::string DescribeChangedChunks(const std::string& folder,
                                  const std::vector<ChangedChunk>& changed);

}  // namespace actex

#endif  // ACTEX_STORAGE_CHUNK_DIGEST_H_
