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

  explicit DocumentAssembler(std::vector<StoredSite> sites) : sites_(std::move(sites)) {}

  // `sites[s]` is the batch's [tokens, width_s] tensor of site s: int32 for an
  // integer site, float32 otherwise.
  std::expected<void, std::string> AddBatch(const ActivationBatchMessage& batch,
                                            const std::vector<SiteRows>& sites, const Sink& sink);
  // True when no document is waiting for more windows.
  bool idle() const { return pending_doc_ < 0; }

 private:
  // A split document's windows of one site so far, [tokens, width].
  struct Collected {
    std::vector<float> values;      // a float site
    std::vector<int32_t> integers;  // an integer site
    void Append(const SiteRows& rows);
    SiteRows Rows() const;
  };
  std::vector<StoredSite> sites_;
  int64_t pending_doc_ = -1;
  int32_t pending_length_ = 0;  // tokens collected so far
  std::vector<int32_t> token_ids_, positions_;
  std::vector<Collected> collected_;  // per site
};

}  // namespace actex

#endif  // ACTEX_ACTORS_DOCUMENT_ASSEMBLER_H_
