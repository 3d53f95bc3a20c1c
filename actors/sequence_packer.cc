#include "actors/sequence_packer.h"

#include <algorithm>

namespace actex {

SequencePacker::SequencePacker(const PackerOptions& options) : options_(options) {}

std::vector<TokenBatchMessage> SequencePacker::Add(int64_t doc_id,
                                                   std::span<const int32_t> tokens) {
  std::vector<TokenBatchMessage> completed;
  const int64_t total = static_cast<int64_t>(tokens.size());
  const int64_t window = options_.max_seq_len;
  const int64_t kept = options_.overflow == Overflow::kSplit ? total : std::min(total, window);
  for (int64_t offset = 0; offset < kept; offset += window) {
    SequenceInfo sequence;
    sequence.doc_id = doc_id;
    sequence.doc_offset = static_cast<int32_t>(offset);
    sequence.length = static_cast<int32_t>(std::min(window, kept - offset));
    sequence.last_of_document = offset + sequence.length >= kept;
    AddSequence(sequence, tokens.subspan(offset, sequence.length), &completed);
  }
  return completed;
}

void SequencePacker::AddSequence(const SequenceInfo& sequence, std::span<const int32_t> tokens,
                                 std::vector<TokenBatchMessage>* completed) {
  const int64_t filled = static_cast<int64_t>(current_.token_ids.size());
  if (filled > 0 && filled + sequence.length > options_.batch_tokens) {
    if (auto batch = Flush()) completed->push_back(std::move(*batch));
  }
  current_.sequences.push_back(sequence);
  current_.token_ids.insert(current_.token_ids.end(), tokens.begin(), tokens.end());
  if (static_cast<int64_t>(current_.token_ids.size()) >= options_.batch_tokens) {
    if (auto batch = Flush()) completed->push_back(std::move(*batch));
  }
}

std::optional<TokenBatchMessage> SequencePacker::Flush() {
  if (current_.sequences.empty()) return std::nullopt;
  TokenBatchMessage batch = std::move(current_);
  current_ = TokenBatchMessage{};
  batch.batch_id = next_batch_id_++;
  return batch;
}

}  // namespace actex
