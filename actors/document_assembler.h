#ifndef ACTEX_ACTORS_DOCUMENT_ASSEMBLER_H_
#define ACTEX_ACTORS_DOCUMENT_ASSEMBLER_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "storage/shard_writer.h"
#include "transport/schema.h"

namespace actex {

// Turns the sequences of activation batches back into whole documents. A document
// that is one sequence is passed on straight from the batch's buffers; the windows
// of a split document are collected until its last one arrives.
class DocumentAssembler {
 public:
  using Sink = std::function<std::expected<void, std::string>(const DocumentActivations&)>;

  explicit DocumentAssembler(std::vector<int> site_widths) : widths_(std::move(site_widths)) {}

  // `sites[s]` is the batch's [tokens, width_s] tensor of site s.
  std::expected<void, std::string> AddBatch(const ActivationBatchMessage& batch,
                                            const std::vector<std::span<const float>>& sites,
                                            const Sink& sink);
  // True when no document is waiting for more windows.
  bool idle() const { return pending_doc_ < 0; }

 private:
  std::vector<int> widths_;
  int64_t pending_doc_ = -1;
  int32_t pending_length_ = 0;  // tokens collected so far
  std::vector<int32_t> token_ids_, positions_;
  std::vector<std::vector<float>> values_;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_DOCUMENT_ASSEMBLER_H_
