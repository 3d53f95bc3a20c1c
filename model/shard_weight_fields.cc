// Which field of LayerShardWeights holds each tensor role: the one place that maps
// architecture.h's roles onto the struct a shard keeps.
#include "model/shard_weights.h"

namespace actex {

std::vector<float>* VectorOf(LayerShardWeights& w, TensorRole role) {
  switch (role) {
    case TensorRole::kInputNorm:
      return &w.input_norm;
    case TensorRole::kInputNormBias:
      return &w.input_norm_bias;
    case TensorRole::kQBias:
      return &w.q_bias;
    case TensorRole::kKBias:
      return &w.k_bias;
    case TensorRole::kVBias:
      return &w.v_bias;
    case TensorRole::kQNorm:
      return &w.q_norm;
    case TensorRole::kKNorm:
      return &w.k_norm;
    case TensorRole::kOBias:
      return &w.o_bias;
    case TensorRole::kPostAttentionNorm:
      return &w.post_attention_norm;
    case TensorRole::kPreMlpNorm:
      return &w.pre_mlp_norm;
    case TensorRole::kPreMlpNormBias:
      return &w.pre_mlp_norm_bias;
    case TensorRole::kPostMlpNorm:
      return &w.post_mlp_norm;
    case TensorRole::kGateBias:
      return &w.gate_bias;
    case TensorRole::kUpBias:
      return &w.up_bias;
    case TensorRole::kDownBias:
      return &w.down_bias;
    case TensorRole::kSharedExpertGate:
      return &w.shared_expert_gate;
    default:
      return nullptr;
  }
}

WeightSlice* MatrixOf(LayerShardWeights& w, const TensorSpec& spec) {
  switch (spec.role) {
    case TensorRole::kQ:
      return &w.q;
    case TensorRole::kK:
      return &w.k;
    case TensorRole::kV:
      return &w.v;
    case TensorRole::kO:
      return &w.o;
    case TensorRole::kGate:
      return &w.gate;
    case TensorRole::kUp:
      return &w.up;
    case TensorRole::kDown:
      return &w.down;
    case TensorRole::kRouter:
      return &w.router;
    case TensorRole::kExpertGate:
      return &w.experts[spec.expert].gate;
    case TensorRole::kExpertUp:
      return &w.experts[spec.expert].up;
    case TensorRole::kExpertDown:
      return &w.experts[spec.expert].down;
    case TensorRole::kSharedGate:
      return &w.shared_expert.gate;
    case TensorRole::kSharedUp:
      return &w.shared_expert.up;
    case TensorRole::kSharedDown:
      return &w.shared_expert.down;
    default:
      return nullptr;
  }
}

void ForEachTensor(const LayerShardWeights& layer,
                   const std::function<void(const WeightSlice&)>& matrix,
                   const std::function<void(const std::vector<float>&)>& vector) {
  for (const WeightSlice* m : {&layer.q, &layer.k, &layer.v, &layer.o, &layer.gate, &layer.up,
                               &layer.down, &layer.router}) {
    matrix(*m);
  }
  auto expert_matrices = [&](const ExpertShardWeights& expert) {
    matrix(expert.gate);
    matrix(expert.up);
    matrix(expert.down);
  };
  for (const ExpertShardWeights& expert : layer.experts) expert_matrices(expert);
  expert_matrices(layer.shared_expert);
  for (const std::vector<float>* v :
       {&layer.input_norm, &layer.input_norm_bias, &layer.q_bias, &layer.k_bias, &layer.v_bias,
        &layer.q_norm, &layer.k_norm, &layer.o_bias, &layer.post_attention_norm,
        &layer.pre_mlp_norm, &layer.pre_mlp_norm_bias, &layer.post_mlp_norm, &layer.gate_bias,
        &layer.up_bias, &layer.down_bias, &layer.shared_expert_gate}) {
    vector(*v);
  }
}

}  // namespace actex
