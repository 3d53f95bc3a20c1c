#ifndef ACTEX_MODEL_SHARD_WEIGHTS_H_
#define ACTEX_MODEL_SHARD_WEIGHTS_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "model/architecture.h"
#include "model/kernels/linear.h"
#include "model/model_weights.h"
#include "model/shard_plan.h"

namespace actex {

// One expert's MLP as a shard holds it: its column slice.
struct ExpertShardWeights {
  WeightSlice gate, up;  // rows of this shard's columns: [columns, hidden]
  WeightSlice down;      // columns of this shard's columns: [hidden, columns]
};

// One decoder layer as a shard sees it, whatever the family (architecture.h names the
// tensors). Matrices are [out, in] views: into the mapped files, or for GPT-2's Conv1D
// weights ([in, out] on disk) into this shard's transposed copy of its slice. Small
// vectors (norm weights, biases) are widened to float32; an empty vector means the
// family has no such tensor. Gemma's (1 + w) norm weights are stored as 1 + w.
struct LayerShardWeights {
  std::vector<float> input_norm, input_norm_bias;  // [hidden]
  WeightSlice q, k, v;  // rows of this shard's heads: [heads*dim, hidden]
  std::vector<float> q_bias, k_bias, v_bias;
  std::vector<float> q_norm, k_norm;       // [head_dim], applied per head
  WeightSlice o;                           // columns of this shard's heads: [hidden, heads*dim]
  std::vector<float> o_bias;               // [hidden]: added once, after the all-reduce
  std::vector<float> post_attention_norm;  // [hidden], sandwich (Gemma)
  std::vector<float> pre_mlp_norm, pre_mlp_norm_bias;  // [hidden]
  std::vector<float> post_mlp_norm;                    // [hidden], sandwich (Gemma)
  WeightSlice gate, up;  // rows of this shard's columns: [columns, hidden]
  std::vector<float> gate_bias, up_bias;
  WeightSlice down;              // columns of this shard's columns: [hidden, columns]
  std::vector<float> down_bias;  // [hidden]: added once, after the all-reduce
  // A mixture-of-experts layer (ModelConfig::IsSparse) instead of gate/up/down:
  WeightSlice router;                       // [experts, hidden], every shard all of it
  std::vector<ExpertShardWeights> experts;  // [experts], each this shard's expert columns
  ExpertShardWeights shared_expert;         // qwen2_moe: this shard's shared columns
  std::vector<float> shared_expert_gate;    // qwen2_moe: [hidden], the shared expert's gate
};

struct ShardWeights {
  WeightView embed;                                // [vocab, hidden], every shard holds all of it
  WeightView position_embed;                       // [max_positions, hidden] (GPT-2), else empty
  std::vector<LayerShardWeights> layers;           // layers [0, last_layer]
  std::vector<float> final_norm, final_norm_bias;  // [hidden]
  std::vector<std::vector<uint8_t>> transposed;    // what Conv1D slices point into
};

// The weights shard `slice` needs for layers [0, last_layer] (-1: none), as
// ArchitectureTensors lists and splits them. `weights` must outlive the result.
std::expected<ShardWeights, std::string> SliceShardWeights(const ModelWeights& weights,
                                                           const ShardSlice& slice, int last_layer);

// The field of `layer` that holds a vector (norm weight, bias) or a matrix of `role`
// (`spec.role`, with its expert); nullptr for a role that is not that kind.
std::vector<float>* VectorOf(LayerShardWeights& layer, TensorRole role);
WeightSlice* MatrixOf(LayerShardWeights& layer, const TensorSpec& spec);

// Calls `matrix` on every matrix of `layer` (empty ones included: weight.data null) and
// `vector` on every small vector (empty ones included), dense and mixture-of-experts
// alike: for a device that keeps its own copy of each tensor (gpu/device_weights.h).
void ForEachTensor(const LayerShardWeights& layer,
                   const std::function<void(const WeightSlice&)>& matrix,
                   const std::function<void(const std::vector<float>&)>& vector);

}  // namespace actex

#endif  // ACTEX_MODEL_SHARD_WEIGHTS_H_
