#ifndef ACTEX_MODEL_DECODER_STATE_H_
#define ACTEX_MODEL_DECODER_STATE_H_

// Internals of DecoderShard (model/decoder_forward.h): what a shard holds from batch to
// batch, and the steps its forward is made of that every device shares (the rest are the
// ShardDevice's, model/shard_device.h). decoder_forward.cc runs the steps, layer by
// layer; decoder_state.cc holds them.

#include <cstdint>
#include <cstring>
#include <expected>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "model/collective.h"
#include "model/kernels/attention.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/packed_batch.h"
#include "model/shard_device.h"
#include "model/shard_plan.h"
#include "model/shard_weights.h"
#include "model/sites.h"

namespace actex {

struct DecoderShardState {
  // Capture points per layer (SiteKind's values).
  static constexpr int kSiteKinds = kSiteKindCount;
  using Buffer = ShardDevice::Buffer;

  // How attention and the MLP each end: the all-reduce completes the shard's partial
  // sum of their output projection, then come its bias, Gemma's sandwich norm, a tap,
  // the residual add and a tap of the stream.
  struct SublayerEnd {
    const char* projection;                                // "o_proj" or "down_proj", for errors
    std::vector<float> LayerShardWeights::*bias;           // [hidden], once after the all-reduce
    std::vector<float> LayerShardWeights::*sandwich_norm;  // [hidden], if config.sandwich_norms
    SiteKind output;                                       // the sublayer's own site
    SiteKind residual;                                     // the stream after the add
  };
  static constexpr SublayerEnd kAttentionEnd = {
      .projection = "o_proj",
      .bias = &LayerShardWeights::o_bias,
      .sandwich_norm = &LayerShardWeights::post_attention_norm,
      .output = SiteKind::kAttnOut,
      .residual = SiteKind::kResidMid};
  static constexpr SublayerEnd kMlpEnd = {.projection = "down_proj",
                                          .bias = &LayerShardWeights::down_bias,
                                          .sandwich_norm = &LayerShardWeights::post_mlp_norm,
                                          .output = SiteKind::kMlpOut,
                                          .residual = SiteKind::kResidPost};

  std::shared_ptr<const ModelWeights> weights;
  ModelConfig config;
  ShardSlice slice;
  std::vector<Site> sites;
  int last_layer = -1;  // the deepest layer any site needs
  ShardWeights shard;
  AttentionHeads attention_heads;
  std::vector<int> capture_slot;  // [(layer + 1) * kSiteKinds + kind] -> index in sites, or -1
  int layers_computed = 0;

  // Where the steps run (CPU cores or a GPU); made once `shard` is sliced, which it
  // reads.
  std::unique_ptr<ShardDevice> device;

  // Host copies for the all-gather of split sites.
  std::vector<float> gather_staging;
  std::vector<std::vector<float>> gathered;

  // Set for the duration of one Forward.
  std::vector<SiteActivations>* captures = nullptr;
  int64_t tokens = 0;

  // The index in `sites` of site (kind, layer; -1 for embed and ln_final), or -1 when
  // no site asks for it.
  int Slot(SiteKind kind, int layer) const {
    const size_t index = static_cast<size_t>((layer + 1) * kSiteKinds + static_cast<int>(kind));
    return index < capture_slot.size() ? capture_slot[index] : -1;
  }
  bool Wants(SiteKind kind, int layer) const { return Slot(kind, layer) >= 0; }

  // Has the device copy `values` ([tokens, width], device memory) into the capture of
  // site (kind, layer), if requested.
  void Tap(SiteKind kind, int layer, const float* values) {
    const int slot = Slot(kind, layer);
    if (slot < 0) return;
    SiteActivations& capture = (*captures)[slot];
    device->Tap(values, tokens * capture.width, capture.values.data());
  }
  // Copies host `values` ([tokens, width]) into the capture of site (kind, layer), if
  // requested: float32 activations, or int32 ones (expert_ids) into its `integers`.
  template <typename T>
  void TapHost(SiteKind kind, int layer, const T* values) {
    const int slot = Slot(kind, layer);
    if (slot < 0) return;
    SiteActivations& capture = (*captures)[slot];
    T* target;
    if constexpr (std::is_same_v<T, int32_t>) {
      target = capture.integers.data();
    } else {
      target = capture.values.data();
    }
    std::memcpy(target, values, static_cast<size_t>(tokens * capture.width) * sizeof(T));
  }

  // Checks that `batch` can run on this shard: as many positions as tokens, sequence
  // lengths positive and summing to the tokens, every token id inside the vocabulary,
  // every position below the model's PositionLimit, and `collective` of this shard's
  // rank and size. Returns the largest position.
  std::expected<int32_t, std::string> CheckBatch(const PackedBatch& batch,
                                                 const Collective& collective) const;

  // The MLP of `w` up to down_proj's input, from `normed_stream` ([tokens, hidden]):
  // act(gate(n)) * up(n) into `gate_act`, or GPT-2's gelu_new(c_fc(n)) into `up_act`
  // (both [tokens, columns]). Returns the one that holds it; `tapped`: it is tapped
  // (ShardDevice::Activate).
  float* MlpHidden(const LayerShardWeights& w, const float* normed_stream, float* gate_act,
                   float* up_act, bool tapped);
  // A mixture-of-experts layer's MLP (its routed experts, each shard its slice of them)
  // on `normed_stream` into `shard_sum` ([tokens, hidden]), and taps of router_logits,
  // expert_ids and expert_weights.
  std::expected<void, std::string> SparseMlp(int layer, const LayerShardWeights& w,
                                             const float* normed_stream, float* shard_sum);
  // Ends a sublayer of `layer` (weights `w`) as `end` says: all-reduces the shard's
  // partial `sublayer_sum` ([tokens, hidden]) and finishes it in place (bias, sandwich
  // norm), taps it, adds it to `resid_stream` and taps that. Fails when the all-reduce
  // does.
  std::expected<void, std::string> AddToResidual(const SublayerEnd& end, const LayerShardWeights& w,
                                                 int layer, float* sublayer_sum,
                                                 float* resid_stream, Collective& collective);
  // Taps `local`, this shard's columns of a site split across shards (mlp_post: its
  // intermediate columns; z: its query heads' dims), as the whole of it: all-gathered
  // from every shard, in rank (= column) order. Fails when the all-gather does or a
  // shard sent other than its columns.
  std::expected<void, std::string> TapGatheredColumns(SiteKind kind, int layer, const float* local,
                                                      Collective& collective);
  // The forward over the batch the device began (checked), into `captures`: the loop
  // over the layers that calls the steps above, in decoder_forward.cc.
  std::expected<void, std::string> Run(Collective& collective);
};

}  // namespace actex

#endif  // ACTEX_MODEL_DECODER_STATE_H_
