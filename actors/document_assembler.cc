#include "actors/document_assembler.h"

#include <numeric>

namespace actex {

void DocumentAssembler::Collected::Append(const SiteRows& rows) {
  values.insert(values.end(), rows.values.begin(), rows.values.end());
  integers.insert(integers.end(), rows.integers.begin(), rows.integers.end());
}

SiteRows DocumentAssembler::Collected::Rows() const {
  return integers.empty() ? SiteRows(values) : SiteRows(integers);
}

std::expected<void, std::string> DocumentAssembler::AddBatch(const ActivationBatchMessage& batch,
                                                             const std::vector<SiteRows>& sites,
                                                             const Sink& sink) {
  if (sites.size() != sites_.size()) {
    return std::unexpected("batch " + std::to_string(batch.batch_id) + " carries " +
                           std::to_string(sites.size()) + " sites, expected " +
                           std::to_string(sites_.size()));
  }
  const size_t tokens = batch.token_ids.size();
  for (size_t s = 0; s < sites.size(); ++s) {
    if (sites[s].size() != tokens * sites_[s].width) {
      return std::unexpected("batch " + std::to_string(batch.batch_id) + ": site " +
                             std::to_string(s) + " has the wrong size");
    }
  }
  size_t row = 0;
  for (size_t index = 0; index < batch.sequences.size(); ++index) {
    const SequenceInfo& sequence = batch.sequences[index];
    const size_t length = sequence.length;
    if (row + length > tokens || length == 0) {
      return std::unexpected("batch " + std::to_string(batch.batch_id) +
                             ": sequences do not match its tokens");
    }
    const bool continues = sequence.doc_id == pending_doc_;
    if (!continues && pending_doc_ >= 0) {
      return std::unexpected("document " + std::to_string(pending_doc_) +
                             " ended without its last window");
    }
    if (continues ? sequence.doc_offset != pending_length_ : sequence.doc_offset != 0) {
      return std::unexpected("document " + std::to_string(sequence.doc_id) +
                             ": windows arrived out of order");
    }
    std::span<const int32_t> ids(batch.token_ids.data() + row, length);
    std::vector<int32_t> positions(length);
    std::iota(positions.begin(), positions.end(), sequence.doc_offset);

    if (!continues && sequence.last_of_document && sequence.doc_offset == 0) {  // no copy
      DocumentActivations document{sequence.doc_id, ids, positions, {}};
      for (size_t s = 0; s < sites.size(); ++s) {
        document.sites.push_back(sites[s].subspan(row * sites_[s].width, length * sites_[s].width));
      }
      if (auto added = sink(document); !added) return added;
    } else {
      if (!continues) {
        pending_doc_ = sequence.doc_id;
        pending_length_ = sequence.doc_offset;
        token_ids_.clear();
        positions_.clear();
        collected_.assign(sites.size(), {});
      }
      token_ids_.insert(token_ids_.end(), ids.begin(), ids.end());
      positions_.insert(positions_.end(), positions.begin(), positions.end());
      for (size_t s = 0; s < sites.size(); ++s) {
        collected_[s].Append(sites[s].subspan(row * sites_[s].width, length * sites_[s].width));
      }
      pending_length_ += static_cast<int32_t>(length);
      if (sequence.last_of_document) {
        DocumentActivations document{pending_doc_, token_ids_, positions_, {}};
        for (const Collected& site : collected_) document.sites.push_back(site.Rows());
        pending_doc_ = -1;
        if (auto added = sink(document); !added) return added;
      }
    }
    row += length;
  }
  if (row != tokens) {
    return std::unexpected("batch " + std::to_string(batch.batch_id) +
                           ": sequences do not cover its tokens");
  }
  return {};
}

}  // namespace actex
