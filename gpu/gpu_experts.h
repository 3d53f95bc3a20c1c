#ifndef ACTEX_GPU_GPU_EXPERTS_H_
#define ACTEX_GPU_GPU_EXPERTS_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "gpu/device_memory.h"
#include "gpu/device_weights.h"
#include "gpu/shard_streams.h"
#include "model/expert_routing.h"
#include "model/kernels/thread_team.h"
#include "model/model_config.h"
#include "model/shard_device.h"
#include "model/shard_plan.h"

namespace actex::gpu {

// One shard's part of a mixture-of-experts MLP on its GPU, as model/mixture_of_experts.h
// computes it on the CPU: the router's product on the GPU in float32 whatever the
// precision (routing is a discrete choice; bf16 logits would move tokens to other
// experts), the logits brought home for the softmax and top-k (model/kernels/routing.h,
// so the routing is the CPU's to the bit for the same logits), the assignments grouped
// by expert and sent back, then for each of the shard's experts in index order its
// tokens gathered, gate/up products, SwiGLU, down product, and the weighted rows added
// into the partial sum; qwen2_moe's shared expert over every token, scaled by its gate.
class GpuExperts {
 public:
  GpuExperts(const ModelConfig& config, const ShardSlice& slice);

  // The MLP of layer weights `w` on `normed` ([tokens, hidden], GPU) into `shard_sum`
  // ([tokens, hidden], GPU); returns the routing in host memory, valid until the next
  // call. Fails when a copy or product does.
  std::expected<RoutingOutputs, std::string> Forward(const LayerShardWeights& w,
                                                     const float* normed, int64_t tokens,
                                                     float* shard_sum, ShardStreams& streams,
                                                     const DeviceWeights& weights,
                                                     Precision precision);

 private:
  // out [rows, hidden] = down(silu(gate(x)) · up(x)) for `expert`'s columns, x [rows, hidden].
  std::expected<void, std::string> ExpertMlp(const ExpertShardWeights& expert, const float* x,
                                             int64_t rows, float* out, ShardStreams& streams,
                                             const DeviceWeights& weights, Precision precision);

  const int64_t hidden_, experts_;
  const int64_t widest_columns_;  // the most columns of an expert or the shared expert
  ExpertRouting routing_;         // the current batch's, on the host
  ThreadTeam caller_;             // the routing runs on the calling thread
  // Each grouped assignment's token and weight, on their way to the GPU.
  std::vector<int32_t> token_of_row_;  // [tokens * top_k]
  std::vector<float> weight_of_row_;   // [tokens * top_k]
  // GPU.
  DeviceMemory logits_on_gpu_, token_of_row_on_gpu_, weight_of_row_on_gpu_;
  DeviceMemory gathered_, gate_, up_, out_;
};

}  // namespace actex::gpu

#endif  // ACTEX_GPU_GPU_EXPERTS_H_
