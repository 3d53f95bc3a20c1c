#ifndef ACTEX_MODEL_DECODER_FORWARD_H_
#define ACTEX_MODEL_DECODER_FORWARD_H_

#include <array>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "model/collective.h"
#include "model/kernels/thread_team.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/packed_batch.h"
#include "model/shard_device.h"
#include "model/shard_plan.h"
#include "model/sites.h"

namespace actex {

struct DecoderShardState;  // model/decoder_state.h

// One tensor-parallel shard of a decoder-only model of any supported family (qwen2,
// llama, mistral, qwen3, gemma2, gemma3_text, gpt2, and the mixtures of experts mixtral,
// qwen2_moe, qwen3_moe, olmoe; see model_config.h): its slice of
// every layer up to the deepest one the requested sites need, and the forward pass
// over a PackedBatch.
// After each all-reduce every shard holds the full residual stream, so every shard
// can produce every capture; actors/ lets rank 0 forward them.
class DecoderShard {
 public:
  // A shard on `threads` (>= 1) of the CPU's cores (model/cpu_shard_device.h).
  static std::expected<std::unique_ptr<DecoderShard>, std::string> Create(
      std::shared_ptr<const ModelWeights> weights, const ShardSlice& slice,
      const std::vector<Site>& sites, int threads = 1);
  // A shard on the device `make_device` makes (the CPU's cores or a GPU:
  // model/shard_device.h); fails when it cannot be made, saying why.
  static std::expected<std::unique_ptr<DecoderShard>, std::string> Create(
      std::shared_ptr<const ModelWeights> weights, const ShardSlice& slice,
      const std::vector<Site>& sites, const ShardDeviceMaker& make_device);

  // Runs the batch and fills `captures` in the order of `sites` given to Create.
  // Every shard of the replica must call Forward with the same batch.
  std::expected<void, std::string> Forward(const PackedBatch& batch, Collective& collective,
                                           std::vector<SiteActivations>* captures);

  // Decoder layers the last Forward ran: the deepest layer the sites need, plus one.
  int layers_computed() const;

  // The shard's host threads, idle between calls of Forward: the caller may run its own
  // work on them there (rank 0 encodes SAE latents on them, actors/device_shard_actor.h).
  ThreadTeam& team();

  // The device, its precision and library, for the node's ready line.
  std::string device_description() const;

  ~DecoderShard();

 private:
  DecoderShard();
  std::unique_ptr<DecoderShardState> state_;
};

// The widths of the buffers a shard's forward keeps for `slice` of `config`, by
// ShardDevice::Buffer: each is [tokens, width] floats of the batch.
std::array<int64_t, ShardDevice::kBufferCount> ForwardBufferWidths(const ModelConfig& config,
                                                                   const ShardSlice& slice);

// The bytes of those buffers per token of a batch: a batch of T tokens takes at least
// T times this on the shard's device, beside its weights (a mixture of experts' own
// buffers come on top).
int64_t ForwardBytesPerToken(const ModelConfig& config, const ShardSlice& slice);

}  // namespace actex

#endif  // ACTEX_MODEL_DECODER_FORWARD_H_
