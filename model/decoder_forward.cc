// The forward pass of one tensor-parallel shard of every supported family, as HF
// transformers computes it (tests/fixtures/qwen2-tiny/README.md,
// tests/fixtures/model-families/README.md and tests/fixtures/moe-families/README.md),
// over a batch of packed sequences. One decoder loop; where families differ, the
// ModelConfig feature that switches is named at the step (the table in model/README.md
// lists which family has which). The steps are the device's (Embed, Linear, Attend, ...:
// model/shard_device.h) or, where every device composes them alike (MlpHidden,
// SparseMlp, AddToResidual, ...), in decoder_state.cc.
// Shapes: `tokens` is the packed batch length, `heads`/`kv_heads` this shard's
// query/key-value heads, `columns` its dense MLP intermediate columns.

#include "model/decoder_forward.h"

#include <algorithm>

#include "model/cpu_shard_device.h"
#include "model/decoder_state.h"

namespace actex {

DecoderShard::DecoderShard() = default;
DecoderShard::~DecoderShard() = default;

int DecoderShard::layers_computed() const { return state_->layers_computed; }

ThreadTeam& DecoderShard::team() { return state_->device->team(); }

std::string DecoderShard::device_description() const { return state_->device->Describe(); }

std::expected<std::unique_ptr<DecoderShard>, std::string> DecoderShard::Create(
    std::shared_ptr<const ModelWeights> weights, const ShardSlice& slice,
    const std::vector<Site>& sites, int threads) {
  return Create(std::move(weights), slice, sites, CpuShardDevices(threads));
}

std::expected<std::unique_ptr<DecoderShard>, std::string> DecoderShard::Create(
    std::shared_ptr<const ModelWeights> weights, const ShardSlice& slice,
    const std::vector<Site>& sites, const ShardDeviceMaker& make_device) {
  const ModelConfig& config = weights->config();
  // Peers' column ranges (for gathers) are recomputed with PlanShard, so the slice must be
  // exactly what PlanShard gives.
  auto planned = PlanShard(config, slice.rank, slice.shards);
  if (!planned) return std::unexpected(planned.error());
  if (*planned != slice) {
    return std::unexpected("shard " + std::to_string(slice.rank) + " of " +
                           std::to_string(slice.shards) + " was not planned by PlanShard for " +
                           config.name);
  }
  auto state = std::make_unique<DecoderShardState>();
  state->weights = weights;
  state->config = config;
  state->slice = slice;
  state->sites = sites;
  state->capture_slot.assign(
      static_cast<size_t>((config.layers + 2) * DecoderShardState::kSiteKinds), -1);
  for (size_t i = 0; i < sites.size(); ++i) {
    const Site& site = sites[i];
    const bool has_layer = site.kind != SiteKind::kEmbed && site.kind != SiteKind::kLnFinal;
    if (has_layer && (site.layer < 0 || site.layer >= config.layers)) {
      return std::unexpected("site " + site.HookName() + " is outside " + config.name +
                             ", which has " + std::to_string(config.layers) + " layers");
    }
    const int layer = has_layer ? site.layer : -1;
    int& slot = state->capture_slot[(layer + 1) * DecoderShardState::kSiteKinds +
                                    static_cast<int>(site.kind)];
    if (slot >= 0) return std::unexpected("site " + site.HookName() + " is requested twice");
    slot = static_cast<int>(i);
    state->last_layer = std::max(state->last_layer, site.LastLayerNeeded(config));
  }
  auto shard = SliceShardWeights(*weights, slice, state->last_layer);
  if (!shard) return std::unexpected(shard.error());
  state->shard = std::move(*shard);
  state->attention_heads = {.first_head = slice.first_head,
                            .heads = slice.end_head - slice.first_head,
                            .first_kv_head = slice.first_kv_head,
                            .kv_heads = slice.end_kv_head - slice.first_kv_head,
                            .group = config.heads / config.kv_heads,
                            .head_dim = config.head_dim,
                            .scale_multiplier = config.attention_multiplier,
                            .softcap = config.attn_softcap};
  auto device = make_device(ShardSetup{.config = state->config,
                                       .slice = state->slice,
                                       .weights = state->shard,
                                       .heads = state->attention_heads,
                                       .last_layer = state->last_layer});
  if (!device) return std::unexpected(device.error());
  state->device = std::move(*device);
  std::unique_ptr<DecoderShard> result(new DecoderShard());
  result->state_ = std::move(state);
  return result;
}

std::expected<void, std::string> DecoderShard::Forward(const PackedBatch& batch,
                                                       Collective& collective,
                                                       std::vector<SiteActivations>* captures) {
  DecoderShardState& s = *state_;
  auto max_position = s.CheckBatch(batch, collective);
  if (!max_position) return std::unexpected(max_position.error());
  const int64_t tokens = static_cast<int64_t>(batch.token_ids.size());
  captures->resize(s.sites.size());
  for (size_t i = 0; i < s.sites.size(); ++i) {
    SiteActivations& capture = (*captures)[i];
    capture.site = s.sites[i];
    capture.width = s.sites[i].Width(s.config);
    const size_t size = static_cast<size_t>(tokens * capture.width);
    capture.values.resize(capture.site.IsInteger() ? 0 : size);
    capture.integers.resize(capture.site.IsInteger() ? size : 0);
  }
  auto begun = s.device->BeginBatch(batch, *max_position);
  if (!begun) return begun;
  s.captures = captures;
  s.tokens = tokens;
  auto result = s.Run(collective);
  auto ended = s.device->EndBatch();  // the taps in flight land, whatever Run gave
  s.captures = nullptr;
  if (!result) return result;
  return ended;
}

std::expected<void, std::string> DecoderShardState::Run(Collective& collective) {
  ShardDevice& d = *device;
  const auto widths = ForwardBufferWidths(config, slice);
  auto reserve = [&](Buffer buffer) {
    return d.Reserve(buffer, tokens * widths[static_cast<size_t>(buffer)]);
  };
  float* resid_stream = reserve(Buffer::kResid);    // [tokens, hidden]
  float* normed_stream = reserve(Buffer::kNormed);  // [tokens, hidden]
  float* queries = reserve(Buffer::kQueries);       // [tokens, heads*dim]
  float* keys = reserve(Buffer::kKeys);             // [tokens, kv_heads*dim]
  float* values = reserve(Buffer::kValues);         // [tokens, kv_heads*dim]
  float* attention = reserve(Buffer::kContext);     // [tokens, heads*dim]
  float* shard_sum = reserve(Buffer::kPartial);     // [tokens, hidden]
  float* gate_act = reserve(Buffer::kGate);         // [tokens, columns]
  float* up_act = reserve(Buffer::kUp);             // [tokens, columns]

  d.Embed(resid_stream, normed_stream);  // [tokens, hidden]
  Tap(SiteKind::kEmbed, -1, resid_stream);
  Tap(SiteKind::kResidPre, 0, resid_stream);

  layers_computed = 0;
  for (int layer = 0; layer <= last_layer; ++layer) {
    const LayerShardWeights& w = shard.layers[layer];

    // Self-attention on input_layernorm(resid) (GPT-2: ln_1).
    d.Normalize(resid_stream, w.input_norm, w.input_norm_bias, normed_stream);  // [tokens, hidden]
    d.Linear(normed_stream, {{w.q, w.q_bias, queries},   // [tokens, heads*dim]
                             {w.k, w.k_bias, keys},      // [tokens, kv_heads*dim]
                             {w.v, w.v_bias, values}});  // [tokens, kv_heads*dim]
    if (config.qk_norm_whole_projection) {  // OLMoE: RMSNorm over all heads, before rotary
      auto normalized = d.NormalizeWholeProjections(layer, w, queries, keys, collective);
      if (!normalized) return normalized;
    } else if (config.qk_norm) {  // Qwen3, Gemma 3: RMSNorm over each head's dim, before rotary
      d.NormalizeHeads(w, queries, keys);
    }
    if (config.rotary) d.Rotate(layer, queries, keys);  // all but GPT-2
    d.Attend(layer, queries, keys, values, attention);  // [tokens, heads*dim]
    if (Wants(SiteKind::kZ, layer)) {                   // this shard's heads; the others' gathered
      auto tapped = TapGatheredColumns(SiteKind::kZ, layer, attention, collective);
      if (!tapped) return tapped;
    }
    // o_proj over this shard's heads is a partial sum; the all-reduce completes it.
    d.Linear(attention, {{w.o, {}, shard_sum}});  // [tokens, hidden]
    auto attended = AddToResidual(kAttentionEnd, w, layer, shard_sum, resid_stream, collective);
    if (!attended) return attended;

    // MLP on the pre-MLP norm (post_attention_layernorm; Gemma: pre_feedforward_layernorm;
    // GPT-2: ln_2).
    d.Normalize(resid_stream, w.pre_mlp_norm, w.pre_mlp_norm_bias, normed_stream);
    if (config.IsSparse(layer)) {  // routed experts, each shard its slice of them
      auto routed = SparseMlp(layer, w, normed_stream, shard_sum);  // [tokens, hidden]
      if (!routed) return routed;
    } else {
      const bool mlp_post_tapped = Wants(SiteKind::kMlpPost, layer);
      float* mlp_hidden =
          MlpHidden(w, normed_stream, gate_act, up_act, mlp_post_tapped);  // [tokens, columns]
      if (mlp_post_tapped) {
        auto tapped = TapGatheredColumns(SiteKind::kMlpPost, layer, mlp_hidden, collective);
        if (!tapped) return tapped;
      }
      d.Linear(mlp_hidden, {{w.down, {}, shard_sum}});  // [tokens, hidden]
    }
    auto added = AddToResidual(kMlpEnd, w, layer, shard_sum, resid_stream, collective);
    if (!added) return added;
    Tap(SiteKind::kResidPre, layer + 1, resid_stream);
    ++layers_computed;
  }

  // The final norm, with its weight: HF's last hidden_states entry.
  if (Wants(SiteKind::kLnFinal, -1)) {
    d.Normalize(resid_stream, shard.final_norm, shard.final_norm_bias, normed_stream);
    Tap(SiteKind::kLnFinal, -1, normed_stream);
  }
  return {};
}

std::array<int64_t, ShardDevice::kBufferCount> ForwardBufferWidths(const ModelConfig& config,
                                                                   const ShardSlice& slice) {
  using Buffer = ShardDevice::Buffer;
  const int64_t hidden = config.hidden;
  const int64_t q_width = int64_t{slice.end_head - slice.first_head} * config.head_dim;
  const int64_t kv_width = int64_t{slice.end_kv_head - slice.first_kv_head} * config.head_dim;
  const int64_t columns = slice.end_intermediate - slice.first_intermediate;
  std::array<int64_t, ShardDevice::kBufferCount> widths{};
  auto set = [&](Buffer buffer, int64_t width) { widths[static_cast<size_t>(buffer)] = width; };
  set(Buffer::kResid, hidden);     // the residual stream
  set(Buffer::kNormed, hidden);    // its normed copy, the products' input
  set(Buffer::kQueries, q_width);  // this shard's query heads
  set(Buffer::kKeys, kv_width);    // its key/value heads
  set(Buffer::kValues, kv_width);
  set(Buffer::kContext, q_width);  // attention's output, o_proj's input
  set(Buffer::kPartial, hidden);   // the shard's partial sum of o_proj or down_proj
  set(Buffer::kGate, columns);     // the MLP's columns of this shard
  set(Buffer::kUp, columns);
  return widths;
}

int64_t ForwardBytesPerToken(const ModelConfig& config, const ShardSlice& slice) {
  int64_t floats = 0;
  for (int64_t width : ForwardBufferWidths(config, slice)) floats += width;
  return floats * static_cast<int64_t>(sizeof(float));
}

}  // namespace actex
