#include "model/shard_weights.h"

#include "model/kernels/half_float.h"

namespace actex {
namespace {

// Elements [first, end) of a 1-D weight, widened to float32.
std::vector<float> WidenVector(const WeightView& view, int64_t first, int64_t end) {
  std::vector<float> values(static_cast<size_t>(end - first));
  const auto* bytes = static_cast<const uint8_t*>(view.data);
  WidenToFloat(bytes + first * WeightDtypeBytes(view.dtype), view.dtype, end - first,
               values.data());
  return values;
}

}  // namespace

std::expected<ShardWeights, std::string> SliceShardWeights(const ModelWeights& weights,
                                                           const ShardSlice& slice,
                                                           int last_layer) {
  const ModelConfig& config = weights.config();
  if (slice.first_head < 0 || slice.first_head >= slice.end_head || slice.end_head > config.heads ||
      slice.first_intermediate < 0 || slice.first_intermediate > slice.end_intermediate ||
      slice.end_intermediate > config.intermediate) {
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

  const int64_t dim = config.head_dim;
  const int64_t first_q = slice.first_head * dim, end_q = slice.end_head * dim;
  const int64_t first_kv = slice.first_kv_head * dim, end_kv = slice.end_kv_head * dim;
  const int64_t first_column = slice.first_intermediate, end_column = slice.end_intermediate;

  ShardWeights shard;
  shard.embed = weights.Get("model.embed_tokens.weight");
  for (int layer = 0; layer <= last_layer; ++layer) {
    const std::string prefix = "model.layers." + std::to_string(layer) + ".";
    auto get = [&](const char* name) { return weights.Get(prefix + name); };
    LayerShardWeights w;
    w.input_norm = WidenVector(get("input_layernorm.weight"), 0, config.hidden);
    w.q = RowSlice(get("self_attn.q_proj.weight"), first_q, end_q);
    w.k = RowSlice(get("self_attn.k_proj.weight"), first_kv, end_kv);
    w.v = RowSlice(get("self_attn.v_proj.weight"), first_kv, end_kv);
    w.q_bias = WidenVector(get("self_attn.q_proj.bias"), first_q, end_q);
    w.k_bias = WidenVector(get("self_attn.k_proj.bias"), first_kv, end_kv);
    w.v_bias = WidenVector(get("self_attn.v_proj.bias"), first_kv, end_kv);
    w.o = ColumnSlice(get("self_attn.o_proj.weight"), first_q, end_q);
    w.post_attention_norm = WidenVector(get("post_attention_layernorm.weight"), 0, config.hidden);
    w.gate = RowSlice(get("mlp.gate_proj.weight"), first_column, end_column);
    w.up = RowSlice(get("mlp.up_proj.weight"), first_column, end_column);
    w.down = ColumnSlice(get("mlp.down_proj.weight"), first_column, end_column);
    shard.layers.push_back(std::move(w));
  }
  shard.final_norm = WidenVector(weights.Get("model.norm.weight"), 0, config.hidden);
  return shard;
}

}  // namespace actex
