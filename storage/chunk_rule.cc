#include "storage/chunk_rule.h"

#include <algorithm>

namespace actex {

int64_t MachineShare::ChunksBelow(int64_t end) const {
  return end > machine ? (end - machine + machines - 1) / machines : 0;
}

std::expected<ChunkRule, std::string> ChunkRule::Of(int64_t docs_per_chunk) {
  if (docs_per_chunk < 1) {
    return std::unexpected("a chunk must hold at least 1 document, not " +
                           std::to_string(docs_per_chunk));
  }
  return ChunkRule(docs_per_chunk);
}

int64_t ChunkRule::DocsIn(int64_t chunk, int64_t corpus_docs) const {
  return std::clamp<int64_t>(corpus_docs - FirstDoc(chunk), 0, docs_per_chunk_);
}

int64_t ChunkRule::ChunkCount(int64_t corpus_docs) const {
  return (corpus_docs + docs_per_chunk_ - 1) / docs_per_chunk_;
}

int64_t ChunkRule::DocsInShare(int64_t corpus_docs, MachineShare share) const {
  // Every cycle of `machines` consecutive chunks gives each machine one whole chunk;
  // the last, partial cycle gives the machine what reaches into its chunk.
  const int64_t cycle = share.machines * docs_per_chunk_;
  const int64_t cycles = corpus_docs / cycle;
  return cycles * docs_per_chunk_ + DocsIn(cycles * share.machines + share.machine, corpus_docs);
}

}  // namespace actex
