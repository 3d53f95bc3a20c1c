#ifndef ACTEX_MODEL_PACKED_BATCH_H_
#define ACTEX_MODEL_PACKED_BATCH_H_

#include <cstdint>
#include <vector>

#include "model/sites.h"

namespace actex {

// What a forward pass (model/decoder_forward.h) takes and gives.

// Sequences laid end to end with no padding; attention never crosses a sequence.
struct PackedBatch {
  std::vector<int32_t> token_ids;         // [tokens]
  std::vector<int32_t> positions;         // [tokens] rotary position inside its sequence
  std::vector<int32_t> sequence_lengths;  // [sequences], sums to tokens
};

// One captured site for a whole batch, row-major.
struct SiteActivations {
  Site site;
  int width = 0;
  std::vector<float> values;      // [tokens, width]; empty for an integer site
  std::vector<int32_t> integers;  // [tokens, width] for an integer site (Site::IsInteger)
};

}  // namespace actex

#endif  // ACTEX_MODEL_PACKED_BATCH_H_
