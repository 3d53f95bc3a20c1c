#ifndef ACTEX_MODEL_QWEN2_FORWARD_H_
#define ACTEX_MODEL_QWEN2_FORWARD_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "model/collective.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/shard_plan.h"
#include "model/sites.h"

namespace actex {

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
  std::vector<float> values;  // [tokens, width]
};

// One tensor-parallel shard of a Qwen2 model: its slice of every layer up to the
// deepest one the requested sites need, and the forward pass over a PackedBatch.
// After each all-reduce every shard holds the full residual stream, so every shard
// can produce every capture; actors/ lets rank 0 forward them.
class Qwen2Shard {
 public:
  // `threads` is how many cores the shard owns: the sgemms use OpenBLAS's (process-wide)
  // threads, and the work between them (element-wise kernels, attention, widening of
  // 16-bit weights) runs on a team of this many threads, the caller of Forward
  // included. 0 takes OpenBLAS's thread count at the time of the call, which is what
  // a shard that called SetBlasThreads(n) before Create wants.
  static std::expected<std::unique_ptr<Qwen2Shard>, std::string> Create(
      std::shared_ptr<const ModelWeights> weights, const ShardSlice& slice,
      const std::vector<Site>& sites, int threads = 0);

  // Runs the batch and fills `captures` in the order of `sites` given to Create.
  // Every shard of the replica must call Forward with the same batch.
  std::expected<void, std::string> Forward(const PackedBatch& batch, Collective& collective,
                                           std::vector<SiteActivations>* captures);

  // Decoder layers the last Forward ran: the deepest layer the sites need, plus one.
  int layers_computed() const;

  ~Qwen2Shard();

 private:
  Qwen2Shard();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_QWEN2_FORWARD_H_
