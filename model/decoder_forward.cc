// The forward pass of one tensor-parallel shard of every supported family, as HF
// transformers computes it (tests/fixtures/qwen2-tiny/README.md and
// tests/fixtures/model-families/README.md), over a batch of packed sequences. One
// decoder loop; where families differ, the ModelConfig feature that switches is named
// at the step (the table in model/README.md lists which family has which).
// Shapes: `tokens` is the packed batch length, `heads`/`kv_heads` this shard's
// query/key-value heads, `columns` its MLP intermediate columns.

#include "model/decoder_forward.h"

#include <algorithm>
#include <cstring>

#include "model/blas_threads.h"
#include "model/kernels/attention.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gelu.h"
#include "model/kernels/half_float.h"
#include "model/kernels/layer_norm.h"
#include "model/kernels/linear.h"
#include "model/kernels/rms_norm.h"
#include "model/kernels/rope_frequencies.h"
#include "model/kernels/rotary.h"
#include "model/kernels/swiglu.h"
#include "model/kernels/thread_team.h"
#include "model/shard_weights.h"

namespace actex {
namespace {

constexpr int kSiteKinds = 8;

// Grows `buffer` to at least `size` floats; never shrinks, so batches reuse memory.
float* Reserve(std::vector<float>& buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(static_cast<size_t>(size));
  return buffer.data();
}

void AddInPlace(float* target, const float* addend, int64_t count) {
  for (int64_t i = 0; i < count; ++i) target[i] += addend[i];
}

// A bias vector for Linear: null when the family has none.
const float* BiasOrNull(const std::vector<float>& bias) {
  return bias.empty() ? nullptr : bias.data();
}

// How attention and the MLP each end: the all-reduce completes the shard's partial sum
// of their output projection, then come its bias, Gemma's sandwich norm, a tap, the
// residual add and a tap of the stream.
struct SublayerEnd {
  const char* projection;                                // "o_proj" or "down_proj", for errors
  std::vector<float> LayerShardWeights::*bias;           // [hidden], once after the all-reduce
  std::vector<float> LayerShardWeights::*sandwich_norm;  // [hidden], if config.sandwich_norms
  SiteKind output;                                       // the sublayer's own site
  SiteKind residual;                                     // the stream after the add
};
constexpr SublayerEnd kAttentionEnd = {.projection = "o_proj",
                                       .bias = &LayerShardWeights::o_bias,
                                       .sandwich_norm = &LayerShardWeights::post_attention_norm,
                                       .output = SiteKind::kAttnOut,
                                       .residual = SiteKind::kResidMid};
constexpr SublayerEnd kMlpEnd = {.projection = "down_proj",
                                 .bias = &LayerShardWeights::down_bias,
                                 .sandwich_norm = &LayerShardWeights::post_mlp_norm,
                                 .output = SiteKind::kMlpOut,
                                 .residual = SiteKind::kResidPost};

// Rows per piece of the element-wise kernels: enough work to outweigh waking a helper.
constexpr int64_t kRowGrain = 32;
// Elements per piece of the flat element-wise kernels.
constexpr int64_t kElementGrain = 32768;

}  // namespace

struct DecoderShard::State {
  std::shared_ptr<const ModelWeights> weights;
  ModelConfig config;
  ShardSlice slice;
  std::vector<Site> sites;
  int last_layer = -1;  // the deepest layer any site needs
  ShardWeights shard;
  AttentionHeads attention_heads;
  std::vector<RotaryTable> rotary;  // [global] or [global, local] (Gemma 3)
  std::vector<int> capture_slot;    // [(layer + 1) * kSiteKinds + kind] -> index in sites, or -1
  int layers_computed = 0;

  // The shard's cores: every projection's shares, attention and the element-wise
  // kernels run on it (see Create).
  std::unique_ptr<ThreadTeam> team;

  // Activations, reused across batches.
  std::vector<float> resid, normed, q, k, v, context, partial, gate, up;
  std::vector<float> widen_scratch;
  std::vector<std::vector<float>> attention_scratch;  // one per team member
  std::vector<std::vector<float>> gathered;

  // Set for the duration of one Forward.
  std::vector<SiteActivations>* captures = nullptr;
  int64_t tokens = 0;

  explicit State(const ModelConfig& model_config) {
    if (!model_config.rotary) return;
    rotary.emplace_back(RopeInverseFrequencies(model_config.head_dim, model_config.rope));
    if (model_config.local_rope) {
      rotary.emplace_back(RopeInverseFrequencies(model_config.head_dim, *model_config.local_rope));
    }
  }
  const RotaryTable& RotaryOf(int layer) const {
    return config.local_rope && config.Slides(layer) ? rotary[1] : rotary[0];
  }

  int Slot(SiteKind kind, int layer) const {
    const size_t index = static_cast<size_t>((layer + 1) * kSiteKinds + static_cast<int>(kind));
    return index < capture_slot.size() ? capture_slot[index] : -1;
  }
  bool Wants(SiteKind kind, int layer) const { return Slot(kind, layer) >= 0; }

  // Copies `values` ([tokens, width]) into the capture of site (kind, layer), if requested.
  void Tap(SiteKind kind, int layer, const float* values) {
    const int slot = Slot(kind, layer);
    if (slot < 0) return;
    SiteActivations& capture = (*captures)[slot];
    std::memcpy(capture.values.data(), values,
                static_cast<size_t>(tokens * capture.width) * sizeof(float));
  }

  // Checks that `batch` can run on this shard: as many positions as tokens, sequence
  // lengths positive and summing to the tokens, every token id inside the vocabulary,
  // every position below the model's PositionLimit, and `collective` of this shard's
  // rank and size. Returns the largest position.
  std::expected<int32_t, std::string> CheckBatch(const PackedBatch& batch,
                                                 const Collective& collective) const;

  // y = norm(x) for every row of [tokens, hidden]; `x` may be `y`. config.norm: RMSNorm
  // (the weight already 1 + w for Gemma) or LayerNorm with `bias`.
  void Normalize(const float* x, const std::vector<float>& weight, const std::vector<float>& bias,
                 float* y);
  // target += addend over [tokens, hidden].
  void Accumulate(float* target, const float* addend);
  // Adds a [hidden] `bias` to every row of `rows` ([tokens, hidden]); none when it is empty.
  void AddBias(float* rows, const std::vector<float>& bias);

  // HF hidden_states[0] into `resid_stream` ([tokens, hidden]): the rows of
  // embed_tokens, times embed_scale (Gemma), plus the learned position rows (GPT-2's
  // wte + wpe; `scratch` holds them, [tokens, hidden]).
  void Embed(const PackedBatch& batch, float* resid_stream, float* scratch);
  // Causal attention of this shard's heads over each sequence of `batch` on its own
  // (Mistral's and Gemma's sliding layers: the last sliding_window keys only): `queries`
  // [tokens, heads*dim], `keys` and `values` [tokens, kv_heads*dim] into `context`
  // [tokens, heads*dim]. `sequence_starts` holds each sequence's first token.
  void Attend(int layer, const PackedBatch& batch, const std::vector<int64_t>& sequence_starts,
              const float* queries, const float* keys, const float* values, float* context);
  // The MLP of `w` up to down_proj's input, from `normed_stream` ([tokens, hidden]):
  // act(gate(n)) * up(n) into `gate_act`, or GPT-2's gelu_new(c_fc(n)) into `up_act`
  // (both [tokens, columns]). Returns the one that holds it.
  float* MlpHidden(const LayerShardWeights& w, const float* normed_stream, float* gate_act,
                   float* up_act);
  // Ends a sublayer of `layer` (weights `w`) as `end` says: all-reduces the shard's
  // partial `sublayer_sum` ([tokens, hidden]) and finishes it in place (bias, sandwich
  // norm), taps it, adds it to `resid_stream` and taps that. Fails when the all-reduce
  // does.
  std::expected<void, std::string> AddToResidual(const SublayerEnd& end, const LayerShardWeights& w,
                                                 int layer, float* sublayer_sum,
                                                 float* resid_stream, Collective& collective);
  std::expected<void, std::string> TapGatheredColumns(SiteKind kind, int layer, const float* local,
                                                      Collective& collective);
  // The forward over `batch` (checked), into `captures`.
  std::expected<void, std::string> Run(const PackedBatch& batch, Collective& collective);
};

DecoderShard::DecoderShard() = default;
DecoderShard::~DecoderShard() = default;

int DecoderShard::layers_computed() const { return state_->layers_computed; }

std::expected<std::unique_ptr<DecoderShard>, std::string> DecoderShard::Create(
    std::shared_ptr<const ModelWeights> weights, const ShardSlice& slice,
    const std::vector<Site>& sites, int threads) {
  const ModelConfig& config = weights->config();
  // Peers' column ranges (for gathers) are recomputed with PlanShard, so the slice must be
  // exactly what PlanShard gives.
  auto planned = PlanShard(config, slice.rank, slice.shards);
  if (!planned) return std::unexpected(planned.error());
  if (planned->first_head != slice.first_head || planned->end_head != slice.end_head ||
      planned->first_kv_head != slice.first_kv_head || planned->end_kv_head != slice.end_kv_head ||
      planned->first_intermediate != slice.first_intermediate ||
      planned->end_intermediate != slice.end_intermediate) {
    return std::unexpected("shard " + std::to_string(slice.rank) + " of " +
                           std::to_string(slice.shards) + " was not planned by PlanShard for " +
                           config.name);
  }
  auto state = std::make_unique<State>(config);
  state->weights = weights;
  state->config = config;
  state->slice = slice;
  state->sites = sites;
  state->capture_slot.assign(static_cast<size_t>((config.layers + 2) * kSiteKinds), -1);
  for (size_t i = 0; i < sites.size(); ++i) {
    const Site& site = sites[i];
    const bool has_layer = site.kind != SiteKind::kEmbed && site.kind != SiteKind::kLnFinal;
    if (has_layer && (site.layer < 0 || site.layer >= config.layers)) {
      return std::unexpected("site " + site.HookName() + " is outside " + config.name +
                             ", which has " + std::to_string(config.layers) + " layers");
    }
    const int layer = has_layer ? site.layer : -1;
    int& slot = state->capture_slot[(layer + 1) * kSiteKinds + static_cast<int>(site.kind)];
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
  state->attention_scratch.resize(static_cast<size_t>(state->team->size()));
  std::unique_ptr<DecoderShard> result(new DecoderShard());
  result->state_ = std::move(state);
  return result;
}

std::expected<void, std::string> DecoderShard::Forward(const PackedBatch& batch,
                                                       Collective& collective,
                                                       std::vector<SiteActivations>* captures) {
  State& s = *state_;
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
    capture.values.resize(static_cast<size_t>(tokens * capture.width));
  }
  s.captures = captures;
  s.tokens = tokens;
  auto result = s.Run(batch, collective);
  s.captures = nullptr;
  return result;
}

std::expected<int32_t, std::string> DecoderShard::State::CheckBatch(
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

void DecoderShard::State::Normalize(const float* x, const std::vector<float>& weight,
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

void DecoderShard::State::Accumulate(float* target, const float* addend) {
  team->ForRanges(tokens * config.hidden, kElementGrain, [&](int64_t first, int64_t end, int) {
    AddInPlace(target + first, addend + first, end - first);
  });
}

void DecoderShard::State::AddBias(float* rows, const std::vector<float>& bias) {
  if (bias.empty()) return;
  const int64_t hidden = config.hidden;
  team->ForRanges(tokens, kRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) AddInPlace(rows + t * hidden, bias.data(), hidden);
  });
}

void DecoderShard::State::Embed(const PackedBatch& batch, float* resid_stream, float* scratch) {
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

std::expected<void, std::string> DecoderShard::State::AddToResidual(const SublayerEnd& end,
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

void DecoderShard::State::Attend(int layer, const PackedBatch& batch,
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

float* DecoderShard::State::MlpHidden(const LayerShardWeights& w, const float* normed_stream,
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

std::expected<void, std::string> DecoderShard::State::Run(const PackedBatch& batch,
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
           &widen_scratch, team.get());  // [tokens, kv_heads*dim]
    if (config.qk_norm) {  // Qwen3, Gemma 3: RMSNorm over each head's dim, before rotary
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
    // o_proj over this shard's heads is a partial sum; the all-reduce completes it.
    Linear(attention, q_width, tokens, w.o, nullptr, shard_sum, hidden, &widen_scratch,
           team.get());  // [tokens, hidden]
    auto attended = AddToResidual(kAttentionEnd, w, layer, shard_sum, resid_stream, collective);
    if (!attended) return attended;

    // MLP on the pre-MLP norm (post_attention_layernorm; Gemma: pre_feedforward_layernorm;
    // GPT-2: ln_2).
    Normalize(resid_stream, w.pre_mlp_norm, w.pre_mlp_norm_bias, normed_stream);
    float* mlp_hidden = MlpHidden(w, normed_stream, gate_act, up_act);  // [tokens, columns]
    if (Wants(SiteKind::kMlpPost, layer)) {
      auto tapped = TapGatheredColumns(SiteKind::kMlpPost, layer, mlp_hidden, collective);
      if (!tapped) return tapped;
    }
    Linear(mlp_hidden, columns, tokens, w.down, nullptr, shard_sum, hidden, &widen_scratch,
           team.get());  // [tokens, hidden]
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

// Every shard holds its own columns of a [tokens, intermediate] activation; the
// capture is the whole of it, assembled in rank (= column) order.
std::expected<void, std::string> DecoderShard::State::TapGatheredColumns(SiteKind kind, int layer,
                                                                         const float* local,
                                                                         Collective& collective) {
  const int64_t columns = slice.end_intermediate - slice.first_intermediate;
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
    const int64_t first = peer->first_intermediate;
    const int64_t width = peer->end_intermediate - first;
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
