#ifndef ACTEX_MODEL_SHARD_PLAN_H_
#define ACTEX_MODEL_SHARD_PLAN_H_

#include <cstdint>
#include <expected>
#include <string>

#include "model/model_config.h"

namespace actex {

// What one tensor-parallel shard holds, Megatron-style: a contiguous range of query
// heads (with the key/value heads those queries read, replicated when several shards
// share one) and a contiguous range of MLP intermediate columns. In a mixture of
// experts: whole experts, an equal range of them per shard, when the experts divide
// evenly over the shards (each shard then reads only its own experts' weights, whole
// rows, and runs full-width products); otherwise every expert, a contiguous range of
// each one's columns (the same range in each). The shared expert is always cut by
// columns. Splits may be uneven.
struct ShardSlice {
  int rank = 0;
  int shards = 1;
  int first_head = 0, end_head = 0;                    // query heads [first, end)
  int first_kv_head = 0, end_kv_head = 0;              // key/value heads [first, end)
  int first_intermediate = 0, end_intermediate = 0;    // MLP columns [first, end)
  int first_expert = 0, end_expert = 0;                // experts held [first, end)
  int first_expert_column = 0, end_expert_column = 0;  // of each held expert [first, end)
  int first_shared_column = 0, end_shared_column = 0;  // of the shared expert [first, end)

  bool operator==(const ShardSlice&) const = default;
};

// The slice of shard `rank` of `shards`. Refuses shards > heads with a message that
// names --shards.
std::expected<ShardSlice, std::string> PlanShard(const ModelConfig& config, int rank, int shards);

// The columns [first, end) of `slice`'s keys ([tokens, kv_heads·head_dim]) whose key/value
// heads this shard counts in a sum over the whole k projection (OLMoE's k_norm): head g
// is counted by the shard holding query head g · group, the first that reads it, so a
// head several shards hold is counted once.
struct KeyColumns {
  int64_t first = 0, end = 0;
};
KeyColumns CountedKeyColumns(const ModelConfig& config, const ShardSlice& slice);

}  // namespace actex

#endif  // ACTEX_MODEL_SHARD_PLAN_H_
