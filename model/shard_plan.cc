#include "model/shard_plan.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace actex {
namespace {

// [first, end) of part `rank` when `count` items are split into `parts` contiguous
// ranges whose sizes differ by at most one, the larger ones first (14 over 3: 5, 5, 4).
std::pair<int, int> NearEqualRange(int count, int rank, int parts) {
  const int base = count / parts;
  const int larger = count % parts;
  const int first = rank * base + std::min(rank, larger);
  return {first, first + base + (rank < larger ? 1 : 0)};
}

}  // namespace

std::expected<ShardSlice, std::string> PlanShard(const ModelConfig& config, int rank, int shards) {
  if (shards < 1 || shards > config.heads) {
    return std::unexpected("--shards " + std::to_string(shards) + " is not possible for " +
                           config.name + ", which has " + std::to_string(config.heads) +
                           " attention heads: each shard needs at least one head, so use "
                           "--shards between 1 and " +
                           std::to_string(config.heads));
  }
  if (rank < 0 || rank >= shards) {
    return std::unexpected("shard rank " + std::to_string(rank) + " is outside [0, " +
                           std::to_string(shards) + ")");
  }
  if (config.kv_heads <= 0 || config.heads % config.kv_heads != 0) {
    return std::unexpected("num_attention_heads " + std::to_string(config.heads) +
                           " is not a multiple of num_key_value_heads " +
                           std::to_string(config.kv_heads));
  }
  ShardSlice slice;
  slice.rank = rank;
  slice.shards = shards;
  std::tie(slice.first_head, slice.end_head) = NearEqualRange(config.heads, rank, shards);
  // Query head h reads key/value head h / group (HF's repeat_kv).
  const int group = config.heads / config.kv_heads;
  slice.first_kv_head = slice.first_head / group;
  slice.end_kv_head = (slice.end_head - 1) / group + 1;
  std::tie(slice.first_intermediate, slice.end_intermediate) =
      NearEqualRange(config.intermediate, rank, shards);
  const MoeConfig& moe = config.moe;
  if (moe.experts > 0 && moe.experts % shards == 0) {  // whole experts
    std::tie(slice.first_expert, slice.end_expert) = NearEqualRange(moe.experts, rank, shards);
    std::tie(slice.first_expert_column, slice.end_expert_column) =
        std::pair{0, moe.expert_intermediate};
  } else {  // a column slice of every expert
    std::tie(slice.first_expert, slice.end_expert) = std::pair{0, moe.experts};
    std::tie(slice.first_expert_column, slice.end_expert_column) =
        NearEqualRange(moe.expert_intermediate, rank, shards);
  }
  std::tie(slice.first_shared_column, slice.end_shared_column) =
      NearEqualRange(config.moe.shared_expert_intermediate, rank, shards);
  return slice;
}

KeyColumns CountedKeyColumns(const ModelConfig& config, const ShardSlice& slice) {
  const int group = config.heads / config.kv_heads;
  const int first_counted = (slice.first_head + group - 1) / group;
  const int end_counted = (slice.end_head + group - 1) / group;
  return {.first = int64_t{first_counted - slice.first_kv_head} * config.head_dim,
          .end = int64_t{end_counted - slice.first_kv_head} * config.head_dim};
}

}  // namespace actex
