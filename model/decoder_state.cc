// The steps of DecoderShard's forward (model/decoder_state.h); decoder_forward.cc runs
// them layer by layer. Shapes: `tokens` is the packed batch length, `hidden` the model's
// width, `columns` this shard's MLP intermediate columns.

#include "model/decoder_state.h"

#include <algorithm>

namespace actex {
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

std::expected<void, std::string> DecoderShardState::AddToResidual(const SublayerEnd& end,
                                                                  const LayerShardWeights& w,
                                                                  int layer, float* sublayer_sum,
                                                                  float* resid_stream,
                                                                  Collective& collective) {
  auto reduced = device->AllReduceSum(sublayer_sum, tokens * config.hidden, collective);
  if (!reduced) {
    return std::unexpected("all-reduce after " + std::string(end.projection) + " of layer " +
                           std::to_string(layer) + ": " + reduced.error());
  }
  device->AddBias(sublayer_sum, w.*end.bias);  // [tokens, hidden]
  if (config.sandwich_norms) {  // Gemma: attn_out and mlp_out are post-norms' outputs
    device->Normalize(sublayer_sum, w.*end.sandwich_norm, {}, sublayer_sum);  // [tokens, hidden]
  }
  Tap(end.output, layer, sublayer_sum);
  device->Accumulate(resid_stream, sublayer_sum);  // [tokens, hidden]
  Tap(end.residual, layer, resid_stream);
  return {};
}

float* DecoderShardState::MlpHidden(const LayerShardWeights& w, const float* normed_stream,
                                    float* gate_act, float* up_act, bool tapped) {
  const int64_t count = tokens * (slice.end_intermediate - slice.first_intermediate);
  if (config.mlp == MlpKind::kGeluTanh) {                        // GPT-2: gelu_new(c_fc(n))
    device->Linear(normed_stream, {{w.up, w.up_bias, up_act}});  // [tokens, columns]
    device->Activate(up_act, nullptr, count, tapped);            // [tokens, columns]
    return up_act;
  }
  // act(gate(n)) * up(n): silu (SwiGLU) or gelu_tanh (Gemma's GeGLU)
  device->GatedLinear(normed_stream, {w.gate, w.gate_bias, gate_act},  // [tokens, columns]
                      {w.up, w.up_bias, up_act}, count, tapped);
  return gate_act;
}

std::expected<void, std::string> DecoderShardState::SparseMlp(int layer, const LayerShardWeights& w,
                                                              const float* normed_stream,
                                                              float* shard_sum) {
  auto routing = device->SparseMlp(w, normed_stream, shard_sum);  // [tokens, hidden]
  if (!routing) return std::unexpected(routing.error());
  TapHost(SiteKind::kRouterLogits, layer, routing->router_logits);    // [tokens, experts]
  TapHost(SiteKind::kExpertIds, layer, routing->expert_ids);          // [tokens, top_k]
  TapHost(SiteKind::kExpertWeights, layer, routing->expert_weights);  // [tokens, top_k]
  return {};
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
      collective.AllGather(device->ToHost(local, tokens * columns, &gather_staging), &gathered);
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
