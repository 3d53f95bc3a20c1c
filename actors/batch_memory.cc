#include "actors/batch_memory.h"

#include <algorithm>

#include "base/text.h"
#include "model/decoder_forward.h"
#include "model/shard_plan.h"

namespace actex {

int64_t HostBytesPerBatchToken(const ExtractPlan& plan, const ModelConfig& config, int local_shards,
                               int replica_shards) {
  const int local_replicas = std::max(1, local_shards / std::max(1, replica_shards));
  int64_t replica_bytes = 0;
  for (const Site& site : plan.sites) {
    replica_bytes += site.Width(config) * static_cast<int64_t>(sizeof(float));
  }
  if (!plan.devices.cuda) {
    for (int rank = 0; rank < replica_shards; ++rank) {
      auto slice = PlanShard(config, rank, replica_shards);
      if (slice) replica_bytes += ForwardBytesPerToken(config, *slice);
    }
  }
  return local_replicas * replica_bytes;
}

LargestBatch LargestBatchOf(const ExtractPlan& plan, int64_t batch_tokens) {
  if (batch_tokens >= plan.max_seq_len) {
    return {batch_tokens, "--batch-tokens " + std::to_string(batch_tokens)};
  }
  return {plan.max_seq_len,
          "--max-seq-len " + std::to_string(plan.max_seq_len) + " (so long a sequence is a batch)"};
}

std::expected<void, std::string> CheckBatchMemory(const ExtractPlan& plan,
                                                  const ModelConfig& config, int local_shards,
                                                  int replica_shards, int64_t batch_tokens,
                                                  const UsableMemory& memory) {
  const int64_t per_token = HostBytesPerBatchToken(plan, config, local_shards, replica_shards);
  if (memory.bytes <= 0 || per_token <= 0) return {};
  const int64_t fitting = memory.bytes / per_token;
  const auto [tokens, flag] = LargestBatchOf(plan, batch_tokens);
  if (tokens <= fitting) return {};
  const std::string held =
      plan.devices.cuda
          ? "the sites captured"
          : "the forward's buffers of this host's " + std::to_string(local_shards) +
                (local_shards == 1 ? " shard" : " shards") + " and the sites captured";
  return std::unexpected(
      flag + ": a batch of " + std::to_string(tokens) + " tokens takes at least " +
      BytesText(static_cast<double>(tokens) * static_cast<double>(per_token)) + " (" +
      BytesText(static_cast<double>(per_token)) + " a token: " + held + "), more than " +
      memory.what + ": give at most " + std::to_string(fitting) + " tokens");
}

}  // namespace actex
