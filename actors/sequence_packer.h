#ifndef ACTEX_ACTORS_SEQUENCE_PACKER_H_
#define ACTEX_ACTORS_SEQUENCE_PACKER_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "actors/extract_options.h"
#include "transport/schema.h"

namespace actex {

struct PackerOptions {
  int max_seq_len = 2048;
  Overflow overflow = Overflow::kTruncate;
  int64_t batch_tokens = 8192;
};

// Cuts documents into sequences of at most max_seq_len tokens (the first window
// only, or every window with --overflow split) and packs them end to end into
// batches of at most batch_tokens, so each projection of the forward pass is one
// large matrix product with no padding. A sequence is never cut by a batch border;
// one longer than batch_tokens travels alone.
class SequencePacker {
 public:
  explicit SequencePacker(const PackerOptions& options);

  // Adds a document (at least one token); returns the batches it completed.
  std::vector<TokenBatchMessage> Add(int64_t doc_id, std::span<const int32_t> tokens);
  // The partly filled batch, if any, at a chunk's or the stream's end.
  std::optional<TokenBatchMessage> Flush();

  int64_t batches_emitted() const { return next_batch_id_; }

 private:
  void AddSequence(const SequenceInfo& sequence, std::span<const int32_t> tokens,
                   std::vector<TokenBatchMessage>* completed);

  PackerOptions options_;
  TokenBatchMessage current_;
  int64_t next_batch_id_ = 0;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_SEQUENCE_PACKER_H_
