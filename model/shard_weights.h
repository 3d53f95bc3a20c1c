#ifndef ACTEX_MODEL_SHARD_WEIGHTS_H_
#define ACTEX_MODEL_SHARD_WEIGHTS_H_

#include <expected>
#include <string>
#include <vector>

#include "model/kernels/linear.h"
#include "model/model_weights.h"
#include "model/shard_plan.h"

namespace actex {

// One decoder layer as a shard sees it. The large matrices stay views into the
// mapped files; the small vectors (norm weights, biases) are widened to float32.
struct LayerShardWeights {
  std::vector<float> input_norm;  // [hidden]
  WeightSlice q, k, v;            // rows of this shard's heads: [heads*dim, hidden]
  std::vector<float> q_bias, k_bias, v_bias;
  WeightSlice o;                           // columns of this shard's heads: [hidden, heads*dim]
  std::vector<float> post_attention_norm;  // [hidden]
  WeightSlice gate, up;                    // rows of this shard's columns: [columns, hidden]
  WeightSlice down;                        // columns of this shard's columns: [hidden, columns]
};

struct ShardWeights {
  WeightView embed;                       // [vocab, hidden], every shard holds all of it
  std::vector<LayerShardWeights> layers;  // layers [0, last_layer]
  std::vector<float> final_norm;          // [hidden]
};

// The weights shard `slice` needs for layers [0, last_layer] (-1: none).
// `weights` must outlive the result, whose views point into its mappings.
std::expected<ShardWeights, std::string> SliceShardWeights(const ModelWeights& weights,
                                                           const ShardSlice& slice, int last_layer);

}  // namespace actex

#endif  // ACTEX_MODEL_SHARD_WEIGHTS_H_
