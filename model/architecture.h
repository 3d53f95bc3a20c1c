#ifndef ACTEX_MODEL_ARCHITECTURE_H_
#define ACTEX_MODEL_ARCHITECTURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace actex {

// What a tensor is to the forward pass, whatever the family calls it.
enum class TensorRole {
  kEmbed,           // token embedding [vocab, hidden]
  kPositionEmbed,   // learned positions [max_positions, hidden] (GPT-2's wpe)
  kFinalNorm, kFinalNormBias,
  kLmHead,          // not read by the forward; checked when present
  // Per layer:
  kInputNorm, kInputNormBias,  // before attention
  kQ, kK, kV, kQBias, kKBias, kVBias,
  kQkv, kQkvBias,              // GPT-2's fused c_attn: [q | k | v] output features
  kQNorm, kKNorm,              // per-head norms [head_dim]
  kO, kOBias,
  kPostAttentionNorm,          // Gemma's norm of the attention output (sandwich)
  kPreMlpNorm, kPreMlpNormBias,
  kPostMlpNorm,                // Gemma's norm of the MLP output (sandwich)
  kGate, kGateBias, kUp, kUpBias, kDown, kDownBias,
  // Mixture-of-experts layers (TensorSpec::expert names the expert):
  kRouter,                                // [experts, hidden]
  kExpertGate, kExpertUp, kExpertDown,    // [I_e, hidden], [I_e, hidden], [hidden, I_e]
  kSharedGate, kSharedUp, kSharedDown,    // qwen2_moe's shared expert
  kSharedExpertGate,                      // qwen2_moe's [1, hidden] sigmoid gate of it
};

// How tensor parallelism cuts a tensor (see shard_plan.h). "Output" and "input" are
// features: rows of a Linear weight [out, in], columns of a Conv1D weight [in, out].
enum class TensorSplit {
  kReplicated,            // every shard holds all of it
  kOutputByHeads,         // output features of the shard's query heads (q, its bias)
  kOutputByKvHeads,       // output features of its key/value heads (k, v, biases)
  kOutputByFusedQkv,      // [q | k | v] outputs, each part by heads (GPT-2's c_attn)
  kInputByHeads,          // input features of its query heads (o_proj)
  kOutputByIntermediate,  // its MLP columns (gate, up, their biases)
  kInputByIntermediate,   // its MLP columns as inputs (down_proj)
  // Every expert is cut like an MLP: each shard holds a column slice of every expert.
  kOutputByExpertColumns,  // its columns of an expert's gate/up
  kInputByExpertColumns,   // its columns of an expert's down as inputs
  kOutputBySharedColumns,  // its columns of the shared expert's gate/up (qwen2_moe)
  kInputBySharedColumns,   // its columns of the shared expert's down
};

enum class TensorLayout { kLinear, kConv1D };  // [out, in] or [in, out] (GPT-2)

// Values make-model draws: uniform with this center and half width.
struct TensorInit {
  float center = 0.0f;
  float half_width = 0.0f;
};

struct TensorSpec {
  std::string name;            // as HF's state_dict names it
  std::vector<int64_t> shape;  // as stored
  TensorRole role;
  int layer = -1;              // -1: not in a decoder layer
  TensorSplit split = TensorSplit::kReplicated;
  TensorLayout layout = TensorLayout::kLinear;
  bool required = true;        // false: lm_head, absent when tied
  TensorInit init;             // for make-model
  std::string because;         // the config fields the shape comes from
  int expert = -1;             // kExpertGate/Up/Down: which expert
};

// Every tensor of `config`'s family and sizes, in state_dict order. Weight loading and
// validation, shard slicing and make-model all read this one table.
std::vector<TensorSpec> ArchitectureTensors(const ModelConfig& config);

// The decoder layer a tensor name belongs to ("model.layers.N." or
// "transformer.h.N."), or -1.
int LayerOfTensor(const std::string& name);

}  // namespace actex

#endif  // ACTEX_MODEL_ARCHITECTURE_H_
