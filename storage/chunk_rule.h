#ifndef ACTEX_STORAGE_CHUNK_RULE_H_
#define ACTEX_STORAGE_CHUNK_RULE_H_

#include <compare>
#include <cstdint>
#include <expected>
#include <string>

namespace actex {

// One of the independent jobs that split one corpus by chunk number (--machine-id M
// --total-machines K): machine M owns the chunks c with c % K == M, whatever the
// jobs' meshes. The default is the one machine that owns every chunk.
struct MachineShare {
  int64_t machine = 0;
  int64_t machines = 1;

  // Whether the machine owns chunk `chunk` (not negative).
  bool Owns(int64_t chunk) const { return chunk % machines == machine; }
  // The lowest chunk the machine owns.
  int64_t FirstChunk() const { return machine; }
  // The chunk the machine owns next after `chunk`, one it owns.
  int64_t NextChunk(int64_t chunk) const { return chunk + machines; }
  // How many chunks the machine owns below chunk `end`.
  int64_t ChunksBelow(int64_t end) const;
};

// How the corpus is cut into chunks, the unit in which documents are dealt, leased,
// written and listed: chunk c holds the doc ids [c * N, (c + 1) * N) for the job's
// chunk size N (--chunk-docs, "chunk_docs" in metadata.json and the lease log). The
// chunks are the same whatever the host count or mesh, so an output can resume under
// another one. Every division of a doc id by the chunk size happens here.
class ChunkRule {
 public:
  // Chunks of one document: the rule of outputs written before chunks existed.
  constexpr ChunkRule() = default;
  // Chunks of `docs_per_chunk` documents; refused (saying so) when it is below 1.
  static std::expected<ChunkRule, std::string> Of(int64_t docs_per_chunk);

  // N: the documents of a whole chunk.
  int64_t docs_per_chunk() const { return docs_per_chunk_; }

  // The chunk that holds document `doc_id` (not negative).
  int64_t ChunkOf(int64_t doc_id) const { return doc_id / docs_per_chunk_; }
  // The first doc id of chunk `chunk`.
  int64_t FirstDoc(int64_t chunk) const { return chunk * docs_per_chunk_; }
  // One past the last doc id of chunk `chunk`: it holds [FirstDoc, EndDoc).
  int64_t EndDoc(int64_t chunk) const { return FirstDoc(chunk) + docs_per_chunk_; }
  // How many documents chunk `chunk` holds in a corpus of `corpus_docs`: N, fewer in
  // the chunk the corpus ends in, 0 past its end.
  int64_t DocsIn(int64_t chunk, int64_t corpus_docs) const;
  // How many chunks a corpus of `corpus_docs` documents has (the last may be short).
  int64_t ChunkCount(int64_t corpus_docs) const;

  // Whether machine `share` computes document `doc_id`: whether it owns its chunk.
  bool InShare(int64_t doc_id, MachineShare share) const { return share.Owns(ChunkOf(doc_id)); }
  // How many of the first `corpus_docs` doc ids lie in the chunks `share` owns.
  int64_t DocsInShare(int64_t corpus_docs, MachineShare share) const;

  auto operator<=>(const ChunkRule&) const = default;

 private:
  explicit constexpr ChunkRule(int64_t docs_per_chunk) : docs_per_chunk_(docs_per_chunk) {}

  int64_t docs_per_chunk_ = 1;  // at least 1
};

}  // namespace actex

#endif  // ACTEX_STORAGE_CHUNK_RULE_H_
