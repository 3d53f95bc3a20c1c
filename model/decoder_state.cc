// The steps of DecoderShard's forward (model/decoder_state.h); decoder_forward.cc runs
// them layer by layer. Shapes: `tokens` is the packed batch length, `hidden` the model's
// width, `columns` this shard's MLP intermediate columns.

#include "model/decoder_state.h"

#include <algorithm>

#include "model/kernels/gelu.h"
#include "model/kernels/half_float.h"
#include "model/kernels/layer_norm.h"
#include "model/kernels/linear.h"
#include "model/kernels/rms_norm.h"
#include "model/kernels/swiglu.h"

namespace actex {
namespace {

void AddInPlace(float* target, const float* addend, int64_t count) {
  for (int64_t i = 0; i < count; ++i) target[i] += addend[i];
}

}  // namespace

std::expected<int32_t, std::string> DecoderShardState::CheckBatch(
    const PackedBatch& batch, const Collective& collective) const {
  const int64_t tokens = static_cast<int64_t>(batch.token_ids.size());
  if (batch.positions.size() != batch.token_ids.size()) {
    return std::unexpected("batch has " + std::to_string(tokens) + " tokens but " +
                           std::to_string(batch.positions.size()) + " positions");
  }
  int64_t packed = 0;
  for (int32_t length : batch.sequence_lengths) {
    if (length <= 0)
      return std::unexpected("batch has a sequence of length " + std::to_string(length));
    packed += length;
  }
  if (packed != tokens) {
    return std::unexpected("batch sequence lengths sum to " + std::to_string(packed) + ", not " +
                           std::to_string(tokens) + " tokens");
  }
  int32_t max_position = -1;
  for (int64_t t = 0; t < tokens; ++t) {
    const int32_t id = batch.token_ids[t];
    if (id < 0 || id >= config.vocab_size) {
      return std::unexpected("token id " + std::to_string(id) + " at batch position " +
                             std::to_string(t) + " is outside the vocabulary of " + config.name +
                             " (" + std::to_string(config.vocab_size) + ")");
    }
    // Learned positions (GPT-2) end at n_positions; rotary ones at kRotaryPositionLimit.
    const int32_t end_position = config.PositionLimit();
    if (batch.positions[t] < 0 || batch.positions[t] >= end_position) {
      return std::unexpected("position " + std::to_string(batch.positions[t]) +
                             " at batch position " + std::to_string(t) + " is outside [0, " +
                             std::to_string(end_position) + ") of " + config.name);
    }
    max_position = std::max(max_position, batch.positions[t]);
  }
  if (collective.size() != slice.shards || collective.rank() != slice.rank) {
    return std::unexpected("collective is rank " + std::to_string(collective.rank()) + " of " +
                           std::to_string(collective.size()) + " but this shard is rank " +
                           std::to_string(slice.rank) + " of " + std::to_string(slice.shards));
  }
  return max_position;
}

void DecoderShardState::Normalize(const float* x, const std::vector<float>& weight,
                                  const std::vector<float>& bias, float* y) {
  const int64_t hidden = config.hidden;
  const float eps = config.rms_norm_eps;
  team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
    if (config.norm == NormKind::kLayerNorm) {
      LayerNorm(x + first * hidden, end - first, hidden, weight.data(), bias.data(), eps,
                y + first * hidden);
    } else {
      RmsNorm(x + first * hidden, end - first, hidden, weight.data(), eps, y + first * hidden);
    }
  });
}

void DecoderShardState::Accumulate(float* target, const float* addend) {
  team->ForRanges(tokens * config.hidden, kElementGrain, [&](int64_t first, int64_t end, int) {
    AddInPlace(target + first, addend + first, end - first);
  });
}

void DecoderShardState::AddBias(float* rows, const std::vector<float>& bias) {
  if (bias.empty()) return;
  const int64_t hidden = config.hidden;
  team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) AddInPlace(rows + t * hidden, bias.data(), hidden);
  });
}

void DecoderShardState::Embed(const PackedBatch& batch, float* resid_stream, float* scratch) {
  const int64_t hidden = config.hidden;
  const auto* embed = static_cast<const uint8_t*>(shard.embed.data);
  const auto* position_embed = static_cast<const uint8_t*>(shard.position_embed.data);
  const int64_t embed_row_bytes = hidden * WeightDtypeBytes(shard.embed.dtype);
  team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      float* row = resid_stream + t * hidden;  // [hidden]
      WidenToFloat(embed + batch.token_ids[t] * embed_row_bytes, shard.embed.dtype, hidden, row);
      if (config.embed_scale > 0.0f) {
        for (int64_t i = 0; i < hidden; ++i) row[i] *= config.embed_scale;
      }
      if (position_embed != nullptr) {
        float* position_row = scratch + t * hidden;  // [hidden]
        WidenToFloat(position_embed + batch.positions[t] * embed_row_bytes,
                     shard.position_embed.dtype, hidden, position_row);
        AddInPlace(row, position_row, hidden);
      }
    }
  });
}

std::expected<void, std::string> DecoderShardState::AddToResidual(const SublayerEnd& end,
                                                                  const LayerShardWeights& w,
                                                                  int layer, float* sublayer_sum,
                                                                  float* resid_stream,
                                                                  Collective& collective) {
  auto reduced =
      collective.AllReduceSum({sublayer_sum, static_cast<size_t>(tokens * config.hidden)});
  if (!reduced) {
    return std::unexpected("all-reduce after " + std::string(end.projection) + " of layer " +
                           std::to_string(layer) + ": " + reduced.error());
  }
  AddBias(sublayer_sum, w.*end.bias);  // [tokens, hidden]
  if (config.sandwich_norms) {         // Gemma: attn_out and mlp_out are post-norms' outputs
    Normalize(sublayer_sum, w.*end.sandwich_norm, {}, sublayer_sum);  // [tokens, hidden]
  }
  Tap(end.output, layer, sublayer_sum);
  Accumulate(resid_stream, sublayer_sum);  // [tokens, hidden]
  Tap(end.residual, layer, resid_stream);
  return {};
}

void DecoderShardState::Attend(int layer, const PackedBatch& batch,
                               const std::vector<int64_t>& sequence_starts, const float* queries,
                               const float* keys, const float* values, float* context) {
  const int64_t dim = config.head_dim;
  const int64_t q_width = attention_heads.heads * dim;
  const int64_t kv_width = attention_heads.kv_heads * dim;
  // One task per (sequence, head): attention never crosses sequences. Mistral and
  // Gemma's sliding layers see only the last sliding_window keys.
  const int heads = attention_heads.heads;
  AttentionHeads layer_heads = attention_heads;
  layer_heads.window = config.Slides(layer) ? config.sliding_window : 0;
  const int64_t tasks = static_cast<int64_t>(batch.sequence_lengths.size()) * heads;
  team->Run(tasks, [&](int64_t task, int member) {
    const int64_t sequence = task / heads;
    const int local = static_cast<int>(task % heads);
    const int64_t first = sequence_starts[sequence];
    AttentionHeads one_head = layer_heads;
    one_head.first_head = layer_heads.first_head + local;
    one_head.heads = 1;
    CausalAttention(queries + first * q_width + local * dim, keys + first * kv_width,
                    values + first * kv_width, q_width, kv_width, batch.sequence_lengths[sequence],
                    one_head, context + first * q_width + local * dim,
                    &attention_scratch[member]);  // [length, dim] of head `local`
  });
}

float* DecoderShardState::MlpHidden(const LayerShardWeights& w, const float* normed_stream,
                                    float* gate_act, float* up_act) {
  const int64_t hidden = config.hidden;
  const int64_t columns = slice.end_intermediate - slice.first_intermediate;
  if (config.mlp == MlpKind::kGeluTanh) {  // GPT-2: gelu_new(c_fc(n))
    Linear(normed_stream, hidden, tokens, w.up, BiasOrNull(w.up_bias), up_act, columns,
           &widen_scratch, team.get());  // [tokens, columns]
    team->ForRanges(tokens * columns, kElementGrain, [&](int64_t first, int64_t end, int) {
      GeluTanh(up_act + first, end - first, up_act + first);
    });  // [tokens, columns]
    return up_act;
  }
  // act(gate(n)) * up(n): silu (SwiGLU) or gelu_tanh (Gemma's GeGLU)
  Linear(normed_stream, hidden, tokens, w.gate, BiasOrNull(w.gate_bias), gate_act, columns,
         &widen_scratch, team.get());  // [tokens, columns]
  Linear(normed_stream, hidden, tokens, w.up, BiasOrNull(w.up_bias), up_act, columns,
         &widen_scratch, team.get());  // [tokens, columns]
  const bool silu = config.mlp == MlpKind::kGatedSilu;
  team->ForRanges(tokens * columns, kElementGrain, [&](int64_t first, int64_t end, int) {
    if (silu) {
      SwiGlu(gate_act + first, up_act + first, end - first, gate_act + first);
    } else {
      GeGlu(gate_act + first, up_act + first, end - first, gate_act + first);
    }
  });  // [tokens, columns]
  return gate_act;
}

std::expected<void, std::string> DecoderShardState::TapGatheredColumns(SiteKind kind, int layer,
                                                                       const float* local,
                                                                       Collective& collective) {
  // The columns of `kind` a shard's slice holds: [first, end).
  auto columns_of = [&](const ShardSlice& held) -> std::pair<int64_t, int64_t> {
    if (kind == SiteKind::kZ) {
      return {int64_t{held.first_head} * config.head_dim, int64_t{held.end_head} * config.head_dim};
    }
    return {held.first_intermediate, held.end_intermediate};
  };
  const auto own = columns_of(slice);
  const int64_t columns = own.second - own.first;
  auto gathered_ok =
      collective.AllGather({local, static_cast<size_t>(tokens * columns)}, &gathered);
  if (!gathered_ok) {
    return std::unexpected("all-gather of " + Site{kind, layer}.HookName() + ": " +
                           gathered_ok.error());
  }
  if (static_cast<int>(gathered.size()) != slice.shards) {
    return std::unexpected("all-gather of " + Site{kind, layer}.HookName() + " returned " +
                           std::to_string(gathered.size()) + " parts for " +
                           std::to_string(slice.shards) + " shards");
  }
  SiteActivations& capture = (*captures)[Slot(kind, layer)];
  for (int rank = 0; rank < slice.shards; ++rank) {
    auto peer = PlanShard(config, rank, slice.shards);
    if (!peer) return std::unexpected(peer.error());
    const auto [first, end] = columns_of(*peer);
    const int64_t width = end - first;
    if (static_cast<int64_t>(gathered[rank].size()) != tokens * width) {
      return std::unexpected("all-gather of " + Site{kind, layer}.HookName() + ": shard " +
                             std::to_string(rank) + " sent " +
                             std::to_string(gathered[rank].size()) + " values, expected " +
                             std::to_string(tokens * width));
    }
    for (int64_t t = 0; t < tokens; ++t) {
      std::memcpy(capture.values.data() + t * capture.width + first,
                  gathered[rank].data() + t * width, static_cast<size_t>(width) * sizeof(float));
    }
  }
  return {};
}

}  // namespace actex
