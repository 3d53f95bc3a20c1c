#ifndef ACTEX_ACTORS_BATCH_MEMORY_H_
#define ACTEX_ACTORS_BATCH_MEMORY_H_

#include <cstdint>
#include <expected>
#include <string>

#include "actors/extract_options.h"
#include "base/machine_memory.h"
#include "model/model_config.h"

namespace actex {

// The host memory one batch takes per token, at least: the forward's buffers of this
// host's CPU shards (model/decoder_forward.h; a GPU's are on the GPU) and every site
// each local replica captures, in float32.
int64_t HostBytesPerBatchToken(const ExtractPlan& plan, const ModelConfig& config, int local_shards,
                               int replica_shards);

// The most tokens one batch holds: max(--batch-tokens, the plan's max_seq_len), since
// a longer sequence travels alone; the flag names the larger.
LargestBatch LargestBatchOf(const ExtractPlan& plan, int64_t batch_tokens);

// Refuses a --batch-tokens whose batch (LargestBatchOf) cannot fit in `memory`
// (UsableMemory::Find()), naming the flag, what one token takes and the most that
// fits: such a batch would otherwise be found out at the first batch, by an allocation
// that fails or by the kernel's out-of-memory killer. A GPU's own memory is checked as
// its shard starts (DevicePlan::MakerFor).
std::expected<void, std::string> CheckBatchMemory(const ExtractPlan& plan,
                                                  const ModelConfig& config, int local_shards,
                                                  int replica_shards, int64_t batch_tokens,
                                                  const UsableMemory& memory);

}  // namespace actex

#endif  // ACTEX_ACTORS_BATCH_MEMORY_H_
