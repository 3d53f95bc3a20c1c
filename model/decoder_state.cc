// The steps of DecoderShard's forward (model/decoder_state.h); decoder_forward.cc runs
// them layer by layer. Shapes: `tokens` is the packed batch length, `hidden` the model's
// width, `columns` this shard's MLP intermediate columns.

#include "model/decoder_state.h"

#include <algorithm>
#include <cmath>

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

std::expected<void, std::string> DecoderShardState::NormalizeWholeProjections(
    int layer, const LayerShardWeights& w, float* queries, float* keys, Collective& collective) {
  const int64_t dim = config.head_dim;
  const int64_t q_width = attention_heads.heads * dim;
  const int64_t kv_width = attention_heads.kv_heads * dim;
  // Key/value head g is counted by the shard holding query head g * group, the first
  // that reads it: columns [counted_first, counted_end) of this shard's keys.
  const int group = attention_heads.group;
  const int first_counted = (slice.first_head + group - 1) / group;
  const int end_counted = (slice.end_head + group - 1) / group;
  const int64_t counted_first = (first_counted - slice.first_kv_head) * dim;
  const int64_t counted_end = (end_counted - slice.first_kv_head) * dim;
  if (static_cast<int64_t>(square_sums.size()) < 2 * tokens) {
    square_sums.resize(static_cast<size_t>(2 * tokens));
  }
  float* sums = square_sums.data();  // [tokens, 2]
  auto sum_of_squares = [](const float* row, int64_t first, int64_t end) {
    double sum = 0.0;
    for (int64_t i = first; i < end; ++i) sum += static_cast<double>(row[i]) * row[i];
    return static_cast<float>(sum);
  };
  team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      sums[2 * t] = sum_of_squares(queries + t * q_width, 0, q_width);
      sums[2 * t + 1] = sum_of_squares(keys + t * kv_width, counted_first, counted_end);
    }
  });
  auto reduced = collective.AllReduceSum({sums, static_cast<size_t>(2 * tokens)});
  if (!reduced) {
    return std::unexpected("all-reduce of q_norm/k_norm of layer " + std::to_string(layer) + ": " +
                           reduced.error());
  }
  // As RmsNorm: x · rsqrt(mean + eps) rounded, then times the weight.
  const float q_count = static_cast<float>(config.heads * dim);
  const float kv_count = static_cast<float>(config.kv_heads * dim);
  const float eps = config.rms_norm_eps;
  auto scale_row = [eps](float* row, int64_t width, float sum, float count, const float* weight) {
    const float inverse_rms = 1.0f / std::sqrt(sum / count + eps);
    for (int64_t i = 0; i < width; ++i) {
      const float normalized = row[i] * inverse_rms;
      row[i] = weight[i] * normalized;
    }
  };
  team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      scale_row(queries + t * q_width, q_width, sums[2 * t], q_count, w.q_norm.data());
      scale_row(keys + t * kv_width, kv_width, sums[2 * t + 1], kv_count, w.k_norm.data());
    }
  });
  return {};
}

void DecoderShardState::SparseMlp(int layer, const LayerShardWeights& w, const float* normed_stream,
                                  float* shard_sum) {
  experts->Forward(w, normed_stream, tokens, shard_sum, &widen_scratch, *team);
  Tap(SiteKind::kRouterLogits, layer, experts->router_logits());    // [tokens, experts]
  Tap(SiteKind::kExpertIds, layer, experts->expert_ids());          // [tokens, top_k]
  Tap(SiteKind::kExpertWeights, layer, experts->expert_weights());  // [tokens, top_k]
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
