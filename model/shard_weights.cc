#include "model/shard_weights.h"

#include <cstring>

#include "model/architecture.h"
#include "model/kernels/half_float.h"

namespace actex {
namespace {

struct Range {
  int64_t first = 0, end = 0;
};

// Elements [first, end) of a 1-D weight, widened to float32.
std::vector<float> WidenVector(const WeightView& view, Range range) {
  std::vector<float> values(static_cast<size_t>(range.end - range.first));
  const auto* bytes = static_cast<const uint8_t*>(view.data);
  WidenToFloat(bytes + range.first * WeightDtypeBytes(view.dtype), view.dtype,
               range.end - range.first, values.data());
  return values;
}

// Rows `rows` and columns `cols` of a [in, out] Conv1D weight as an [out, in] matrix
// in `storage` (same dtype), so the Linear kernel reads it like any other weight.
WeightView TransposedCopy(const WeightView& view, Range rows, Range cols,
                          std::vector<uint8_t>& storage) {
  const int64_t element = WeightDtypeBytes(view.dtype);
  const int64_t out = cols.end - cols.first, in = rows.end - rows.first;
  storage.resize(static_cast<size_t>(out * in * element));
  const auto* source = static_cast<const uint8_t*>(view.data);
  for (int64_t i = 0; i < in; ++i) {
    const uint8_t* row = source + ((rows.first + i) * view.cols + cols.first) * element;
    for (int64_t o = 0; o < out; ++o) {
      std::memcpy(storage.data() + (o * in + i) * element, row + o * element,
                  static_cast<size_t>(element));
    }
  }
  return {storage.data(), view.dtype, out, in};
}

bool IsNormWeight(TensorRole role) {
  switch (role) {
    case TensorRole::kInputNorm:
    case TensorRole::kQNorm:
    case TensorRole::kKNorm:
    case TensorRole::kPostAttentionNorm:
    case TensorRole::kPreMlpNorm:
    case TensorRole::kPostMlpNorm:
    case TensorRole::kFinalNorm:
      return true;
    default:
      return false;
  }
}

// Fails when `slice` is not a slice of `config` (head or column ranges outside it,
// key/value heads other than its query heads need) or `last_layer` is past its layers.
std::expected<void, std::string> CheckSlice(const ModelConfig& config, const ShardSlice& slice,
                                            int last_layer) {
  if (slice.first_head < 0 || slice.first_head >= slice.end_head || slice.end_head > config.heads ||
      slice.first_intermediate < 0 || slice.first_intermediate > slice.end_intermediate ||
      slice.end_intermediate > config.intermediate || slice.first_expert < 0 ||
      slice.first_expert > slice.end_expert || slice.end_expert > config.moe.experts ||
      slice.first_expert_column < 0 || slice.end_expert_column > config.moe.expert_intermediate ||
      slice.first_shared_column < 0 ||
      slice.end_shared_column > config.moe.shared_expert_intermediate) {
    return std::unexpected("shard " + std::to_string(slice.rank) + " of " +
                           std::to_string(slice.shards) + " has head or column ranges outside " +
                           config.name);
  }
  const int group = config.heads / config.kv_heads;
  if (slice.first_kv_head != slice.first_head / group ||
      slice.end_kv_head != (slice.end_head - 1) / group + 1) {
    return std::unexpected("shard " + std::to_string(slice.rank) +
                           ": key/value heads do not match its query heads");
  }
  if (last_layer >= config.layers) {
    return std::unexpected("layer " + std::to_string(last_layer) + " requested, but " +
                           config.name + " has " + std::to_string(config.layers) + " layers");
  }
  return {};
}

// The features one shard owns, in the units of a weight's rows or columns.
struct ShardFeatures {
  Range heads, kv_heads, columns;  // its query heads * dim, key/value heads * dim, MLP columns
  Range expert_columns, shared_columns;  // of every expert, of the shared expert
  int64_t q_width = 0, kv_width = 0;     // all query and all key/value features of the model

  ShardFeatures(const ModelConfig& config, const ShardSlice& slice)
      : heads{slice.first_head * config.head_dim, slice.end_head * config.head_dim},
        kv_heads{slice.first_kv_head * config.head_dim, slice.end_kv_head * config.head_dim},
        columns{slice.first_intermediate, slice.end_intermediate},
        expert_columns{slice.first_expert_column, slice.end_expert_column},
        shared_columns{slice.first_shared_column, slice.end_shared_column},
        q_width(int64_t{config.heads} * config.head_dim),
        kv_width(int64_t{config.kv_heads} * config.head_dim) {}
};

// The shard's range of the features a split cuts by: its query heads' features (o_proj's
// inputs), its MLP columns, or its columns of every expert or of the shared expert.
Range ColumnsOf(TensorSplit split, const ShardFeatures& features) {
  switch (split) {
    case TensorSplit::kInputByHeads:
      return features.heads;
    case TensorSplit::kOutputByExpertColumns:
    case TensorSplit::kInputByExpertColumns:
      return features.expert_columns;
    case TensorSplit::kOutputBySharedColumns:
    case TensorSplit::kInputBySharedColumns:
      return features.shared_columns;
    default:
      return features.columns;
  }
}

// What a shard takes of one weight: a range of output features per part (one, or q, k
// and v of a fused weight), and one range of input features.
struct TakenRanges {
  std::vector<Range> outputs;
  Range inputs;
};

// The ranges of `view` (as `spec` lays it out and splits it) that `features` owns.
TakenRanges RangesOf(const TensorSpec& spec, const WeightView& view,
                     const ShardFeatures& features) {
  TakenRanges taken{.outputs = {},
                    .inputs = {0, spec.layout == TensorLayout::kConv1D ? view.rows : view.cols}};
  const int64_t all_outputs = spec.layout == TensorLayout::kConv1D ? view.cols : view.rows;
  const Range& kv_heads = features.kv_heads;
  const int64_t q_width = features.q_width, kv_width = features.kv_width;
  switch (spec.split) {
    case TensorSplit::kReplicated:
      taken.outputs = {{0, view.rows == 1 ? view.cols : all_outputs}};
      break;
    case TensorSplit::kOutputByHeads:
      taken.outputs = {features.heads};
      break;
    case TensorSplit::kOutputByKvHeads:
      taken.outputs = {kv_heads};
      break;
    case TensorSplit::kOutputByIntermediate:
    case TensorSplit::kOutputByExpertColumns:
    case TensorSplit::kOutputBySharedColumns:
      taken.outputs = {ColumnsOf(spec.split, features)};
      break;
    case TensorSplit::kOutputByFusedQkv:
      taken.outputs = {features.heads,
                       {q_width + kv_heads.first, q_width + kv_heads.end},
                       {q_width + kv_width + kv_heads.first, q_width + kv_width + kv_heads.end}};
      break;
    case TensorSplit::kInputByHeads:
    case TensorSplit::kInputByIntermediate:
    case TensorSplit::kInputByExpertColumns:
    case TensorSplit::kInputBySharedColumns:
      taken.outputs = {{0, all_outputs}};
      taken.inputs = ColumnsOf(spec.split, features);
      break;
  }
  return taken;
}

// Stores the shard's part of a vector weight (a norm weight or a bias; a fused q/k/v
// bias in three parts) widened to float32; Gemma's norm weights as 1 + w.
void StoreVector(const TensorSpec& spec, const WeightView& view, const TakenRanges& taken,
                 bool one_plus_weight, ShardWeights* shard) {
  std::vector<std::vector<float>*> targets;
  if (spec.role == TensorRole::kQkvBias) {
    LayerShardWeights& w = shard->layers[spec.layer];
    targets = {&w.q_bias, &w.k_bias, &w.v_bias};
  } else if (spec.layer < 0) {
    targets = {spec.role == TensorRole::kFinalNorm ? &shard->final_norm : &shard->final_norm_bias};
  } else {
    targets = {VectorOf(shard->layers[spec.layer], spec.role)};
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    *targets[i] = WidenVector(view, taken.outputs[i]);
    if (one_plus_weight && IsNormWeight(spec.role)) {
      for (float& value : *targets[i]) value = 1.0f + value;  // HF: (1.0 + w.float())
    }
  }
}

// Stores the shard's part of a layer's matrix (a fused q/k/v one in three parts) as a
// slice into the mapped file, or into a transposed copy of a Conv1D weight kept in
// shard->transposed.
void StoreMatrix(const TensorSpec& spec, const WeightView& view, const TakenRanges& taken,
                 ShardWeights* shard) {
  std::vector<WeightSlice*> targets;
  LayerShardWeights& w = shard->layers[spec.layer];
  if (spec.role == TensorRole::kQkv) {
    targets = {&w.q, &w.k, &w.v};
  } else {
    targets = {MatrixOf(w, spec)};
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    if (spec.layout == TensorLayout::kConv1D) {
      shard->transposed.emplace_back();
      const WeightView copy =
          TransposedCopy(view, taken.inputs, taken.outputs[i], shard->transposed.back());
      *targets[i] = RowSlice(copy, 0, copy.rows);
    } else if (taken.inputs.first != 0 || taken.inputs.end != view.cols) {
      *targets[i] = ColumnSlice(view, taken.inputs.first, taken.inputs.end);
    } else {
      *targets[i] = RowSlice(view, taken.outputs[i].first, taken.outputs[i].end);
    }
  }
}

}  // namespace

std::expected<ShardWeights, std::string> SliceShardWeights(const ModelWeights& weights,
                                                           const ShardSlice& slice,
                                                           int last_layer) {
  const ModelConfig& config = weights.config();
  if (auto checked = CheckSlice(config, slice, last_layer); !checked) {
    return std::unexpected(checked.error());
  }
  const ShardFeatures features(config, slice);
  const bool one_plus_weight = config.norm == NormKind::kRmsOnePlusWeight;

  ShardWeights shard;
  shard.layers.resize(static_cast<size_t>(last_layer + 1));
  for (int layer = 0; layer <= last_layer; ++layer) {
    // Indexed by expert; another shard's experts stay empty.
    if (config.IsSparse(layer)) shard.layers[layer].experts.resize(config.moe.experts);
  }
  shard.transposed.reserve(static_cast<size_t>(6 * (last_layer + 1)));
  for (const TensorSpec& spec : ArchitectureTensors(config)) {
    if (spec.layer > last_layer || spec.role == TensorRole::kLmHead) continue;
    // Another shard's whole expert: never referenced, so its pages are never read.
    if (spec.expert >= 0 && (spec.expert < slice.first_expert || spec.expert >= slice.end_expert)) {
      continue;
    }
    const WeightView view = weights.Get(spec.name);
    if (view.data == nullptr) {
      return std::unexpected("tensor " + spec.name + " was not loaded from " + config.name);
    }
    if (spec.shape.size() == 1 || spec.role == TensorRole::kSharedExpertGate) {
      // a vector: a norm weight, a bias, qwen2_moe's [1, hidden] shared-expert gate
      StoreVector(spec, view, RangesOf(spec, view, features), one_plus_weight, &shard);
    } else if (spec.role == TensorRole::kEmbed) {
      shard.embed = view;
    } else if (spec.role == TensorRole::kPositionEmbed) {
      shard.position_embed = view;
    } else {
      StoreMatrix(spec, view, RangesOf(spec, view, features), &shard);
    }
  }
  return shard;
}

}  // namespace actex
