// The forward pass of one tensor-parallel shard of every supported family, as HF
// transformers computes it (tests/fixtures/qwen2-tiny/README.md,
// tests/fixtures/model-families/README.md and tests/fixtures/moe-families/README.md),
// over a batch of packed sequences. One decoder loop; where families differ, the
// ModelConfig feature that switches is named at the step (the table in model/README.md
// lists which family has which). The steps themselves (Embed, Attend, MlpHidden,
// SparseMlp, AddToResidual, ...) are in decoder_state.cc.
// Shapes: `tokens` is the packed batch length, `heads`/`kv_heads` this shard's
// query/key-value heads, `columns` its dense MLP intermediate columns.

#include "model/decoder_forward.h"

#include <algorithm>

#include "model/blas_threads.h"
#include "model/decoder_state.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/linear.h"
#include "model/kernels/rms_norm.h"

namespace actex {
namespace {

// Grows `buffer` to at least `size` floats; never shrinks, so batches reuse memory.
float* Reserve(std::vector<float>& buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(static_cast<size_t>(size));
  return buffer.data();
}

}  // namespace

DecoderShard::DecoderShard() = default;
DecoderShard::~DecoderShard() = default;

int DecoderShard::layers_computed() const { return state_->layers_computed; }

ThreadTeam& DecoderShard::team() { return *state_->team; }

std::expected<std::unique_ptr<DecoderShard>, std::string> DecoderShard::Create(
    std::shared_ptr<const ModelWeights> weights, const ShardSlice& slice,
    const std::vector<Site>& sites, int threads) {
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
  auto state = std::make_unique<DecoderShardState>(config);
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
  if (threads < 1) {
    return std::unexpected("a shard needs at least one thread, not " + std::to_string(threads));
  }
  if (auto isa = CheckIsaOverride(); !isa) return std::unexpected(isa.error());
  state->team = std::make_unique<ThreadTeam>(threads);
  if (config.moe.experts > 0) state->experts = std::make_unique<MixtureOfExperts>(config, slice);
  state->attention_scratch.resize(static_cast<size_t>(state->team->size()));
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
  for (RotaryTable& table : s.rotary) table.Reserve(int64_t{*max_position} + 1);
  // The team is the parallelism (see Create): OpenBLAS's own threads would only
  // contend with it.
  if (BlasThreads() != 1) SetBlasThreads(1);

  captures->resize(s.sites.size());
  for (size_t i = 0; i < s.sites.size(); ++i) {
    SiteActivations& capture = (*captures)[i];
    capture.site = s.sites[i];
    capture.width = s.sites[i].Width(s.config);
    const size_t size = static_cast<size_t>(tokens * capture.width);
    capture.values.resize(capture.site.IsInteger() ? 0 : size);
    capture.integers.resize(capture.site.IsInteger() ? size : 0);
  }
  s.captures = captures;
  s.tokens = tokens;
  auto result = s.Run(batch, collective);
  s.captures = nullptr;
  return result;
}

std::expected<void, std::string> DecoderShardState::Run(const PackedBatch& batch,
                                                        Collective& collective) {
  const int64_t hidden = config.hidden;
  const int64_t dim = config.head_dim;
  const int64_t q_width = attention_heads.heads * dim;      // this shard's query heads
  const int64_t kv_width = attention_heads.kv_heads * dim;  // its key/value heads
  const int64_t columns = slice.end_intermediate - slice.first_intermediate;
  const float eps = config.rms_norm_eps;

  float* resid_stream = Reserve(resid, tokens * hidden);    // [tokens, hidden]
  float* normed_stream = Reserve(normed, tokens * hidden);  // [tokens, hidden]
  float* queries = Reserve(q, tokens * q_width);            // [tokens, heads*dim]
  float* keys = Reserve(k, tokens * kv_width);              // [tokens, kv_heads*dim]
  float* values = Reserve(v, tokens * kv_width);            // [tokens, kv_heads*dim]
  float* attention = Reserve(context, tokens * q_width);    // [tokens, heads*dim]
  float* shard_sum = Reserve(partial, tokens * hidden);     // [tokens, hidden]
  float* gate_act = Reserve(gate, tokens * columns);        // [tokens, columns]
  float* up_act = Reserve(up, tokens * columns);            // [tokens, columns]
  std::vector<int64_t> sequence_starts;                     // the first token of every sequence
  for (int64_t start = 0; int32_t length : batch.sequence_lengths) {
    sequence_starts.push_back(start);
    start += length;
  }

  Embed(batch, resid_stream, normed_stream);  // [tokens, hidden]
  Tap(SiteKind::kEmbed, -1, resid_stream);
  Tap(SiteKind::kResidPre, 0, resid_stream);

  layers_computed = 0;
  for (int layer = 0; layer <= last_layer; ++layer) {
    const LayerShardWeights& w = shard.layers[layer];

    // Self-attention on input_layernorm(resid) (GPT-2: ln_1).
    Normalize(resid_stream, w.input_norm, w.input_norm_bias, normed_stream);  // [tokens, hidden]
    Linear(normed_stream, hidden, tokens, w.q, BiasOrNull(w.q_bias), queries, q_width,
           &widen_scratch, team.get());  // [tokens, heads*dim]
    Linear(normed_stream, hidden, tokens, w.k, BiasOrNull(w.k_bias), keys, kv_width, &widen_scratch,
           team.get());  // [tokens, kv_heads*dim]
    Linear(normed_stream, hidden, tokens, w.v, BiasOrNull(w.v_bias), values, kv_width,
           &widen_scratch, team.get());     // [tokens, kv_heads*dim]
    if (config.qk_norm_whole_projection) {  // OLMoE: RMSNorm over all heads, before rotary
      auto normalized = NormalizeWholeProjections(layer, w, queries, keys, collective);
      if (!normalized) return normalized;
    } else if (config.qk_norm) {  // Qwen3, Gemma 3: RMSNorm over each head's dim, before rotary
      team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
        RmsNorm(queries + first * q_width, (end - first) * attention_heads.heads, dim,
                w.q_norm.data(), eps, queries + first * q_width);  // [tokens, heads*dim]
        RmsNorm(keys + first * kv_width, (end - first) * attention_heads.kv_heads, dim,
                w.k_norm.data(), eps, keys + first * kv_width);  // [tokens, kv_heads*dim]
      });
    }
    if (config.rotary) {  // all but GPT-2; Gemma 3's sliding layers have their own table
      const RotaryTable& table = RotaryOf(layer);
      team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
        ApplyRotary(queries + first * q_width, end - first, q_width, attention_heads.heads,
                    static_cast<int>(dim), batch.positions.data() + first, table);
        ApplyRotary(keys + first * kv_width, end - first, kv_width, attention_heads.kv_heads,
                    static_cast<int>(dim), batch.positions.data() + first, table);
      });
    }
    Attend(layer, batch, sequence_starts, queries, keys, values, attention);  // [tokens, heads*dim]
    if (Wants(SiteKind::kZ, layer)) {  // this shard's heads; the others' gathered
      auto tapped = TapGatheredColumns(SiteKind::kZ, layer, attention, collective);
      if (!tapped) return tapped;
    }
    // o_proj over this shard's heads is a partial sum; the all-reduce completes it.
    Linear(attention, q_width, tokens, w.o, nullptr, shard_sum, hidden, &widen_scratch,
           team.get());  // [tokens, hidden]
    auto attended = AddToResidual(kAttentionEnd, w, layer, shard_sum, resid_stream, collective);
    if (!attended) return attended;

    // MLP on the pre-MLP norm (post_attention_layernorm; Gemma: pre_feedforward_layernorm;
    // GPT-2: ln_2).
    Normalize(resid_stream, w.pre_mlp_norm, w.pre_mlp_norm_bias, normed_stream);
    if (config.IsSparse(layer)) {  // routed experts, each shard its columns of every one
      SparseMlp(layer, w, normed_stream, shard_sum);  // [tokens, hidden]
    } else {
      float* mlp_hidden = MlpHidden(w, normed_stream, gate_act, up_act);  // [tokens, columns]
      if (Wants(SiteKind::kMlpPost, layer)) {
        auto tapped = TapGatheredColumns(SiteKind::kMlpPost, layer, mlp_hidden, collective);
        if (!tapped) return tapped;
      }
      Linear(mlp_hidden, columns, tokens, w.down, nullptr, shard_sum, hidden, &widen_scratch,
             team.get());  // [tokens, hidden]
    }
    auto added = AddToResidual(kMlpEnd, w, layer, shard_sum, resid_stream, collective);
    if (!added) return added;
    Tap(SiteKind::kResidPre, layer + 1, resid_stream);
    ++layers_computed;
  }

  // The final norm, with its weight: HF's last hidden_states entry.
  if (Wants(SiteKind::kLnFinal, -1)) {
    Normalize(resid_stream, shard.final_norm, shard.final_norm_bias, normed_stream);
    Tap(SiteKind::kLnFinal, -1, normed_stream);
  }
  return {};
}

}  // namespace actex
