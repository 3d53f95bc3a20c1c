// Shapes: `tokens` is the packed batch length, `hidden` the model's width, `rows` the
// tokens routed to one expert, `columns` this shard's columns of an expert.

#include "model/mixture_of_experts.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/kernels/swiglu.h"

namespace actex {
namespace {

// Grows `buffer` to at least `size` elements; never shrinks, so batches reuse memory.
template <typename T>
T* GrowTo(std::vector<T>& buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(static_cast<size_t>(size));
  return buffer.data();
}

}  // namespace

MixtureOfExperts::MixtureOfExperts(const ModelConfig& config, const ShardSlice& slice)
    : hidden_(config.hidden),
      expert_columns_(slice.end_expert_column - slice.first_expert_column),
      shared_columns_(slice.end_shared_column - slice.first_shared_column),
      routing_(config, slice) {}

void MixtureOfExperts::Forward(const LayerShardWeights& w, const float* normed, int64_t tokens,
                               float* shard_sum, LinearProducts& products, ThreadTeam& team) {
  const int64_t experts = w.router.out_features();
  // In float32 whatever the precision, as on the GPU: which experts a token goes to is a
  // discrete choice that bf16 logits would move.
  products.Float32Linear(normed, hidden_, tokens, w.router, nullptr, routing_.LogitsFor(tokens),
                         experts);  // [tokens, experts]
  routing_.Route(tokens, team);

  team.ForRanges(tokens * hidden_, kTeamElementGrain, [&](int64_t first, int64_t end, int) {
    std::fill(shard_sum + first, shard_sum + end, 0.0f);
  });  // [tokens, hidden]
  // HF's order: expert by expert, each adding into the tokens it serves (the other
  // shards' experts come in with the all-reduce).
  for (int e = routing_.first_expert(); e < routing_.end_expert(); ++e) {
    RunExpert(e, w.experts[e], normed, shard_sum, products, team);
  }
  if (!w.shared_expert_gate.empty()) {
    AddSharedExpert(w, normed, tokens, shard_sum, products, team);
  }
}

void MixtureOfExperts::RunExpert(int e, const ExpertShardWeights& expert, const float* normed,
                                 float* shard_sum, LinearProducts& products, ThreadTeam& team) {
  const int64_t first = routing_.first_assignment(e);
  const int64_t count = routing_.first_assignment(e + 1) - first;
  if (count == 0 || expert_columns_ == 0) return;
  const int64_t* routed = routing_.assignments() + first;  // [count]: token · top_k + slot
  const int top_k = routing_.top_k();
  float* gathered = GrowTo(gathered_, count * hidden_);  // [count, hidden]
  team.ForRanges(count, kTeamRowGrain, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      std::memcpy(gathered + r * hidden_, normed + (routed[r] / top_k) * hidden_,
                  static_cast<size_t>(hidden_) * sizeof(float));
    }
  });
  float* out = GrowTo(expert_out_, count * hidden_);  // [count, hidden]
  ExpertMlp(expert, expert_columns_, gathered, count, out, products, team);
  // Each token appears once per expert, so rows can be added in parallel.
  team.ForRanges(count, kTeamRowGrain, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      const float weight = routing_.weight(routed[r]);
      float* target = shard_sum + (routed[r] / top_k) * hidden_;  // [hidden]
      const float* row = out + r * hidden_;                       // [hidden]
      for (int64_t i = 0; i < hidden_; ++i) target[i] += row[i] * weight;
    }
  });
}

void MixtureOfExperts::AddSharedExpert(const LayerShardWeights& w, const float* normed,
                                       int64_t tokens, float* shard_sum, LinearProducts& products,
                                       ThreadTeam& team) {
  float* out = GrowTo(expert_out_, tokens * hidden_);  // [tokens, hidden]
  ExpertMlp(w.shared_expert, shared_columns_, normed, tokens, out, products, team);
  const float* gate = w.shared_expert_gate.data();  // [hidden]
  team.ForRanges(tokens, kTeamRowGrain, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      const float* row = normed + t * hidden_;  // [hidden]
      double logit = 0.0;
      for (int64_t i = 0; i < hidden_; ++i) logit += static_cast<double>(row[i]) * gate[i];
      const float scale = 1.0f / (1.0f + std::exp(-static_cast<float>(logit)));  // sigmoid
      float* target = shard_sum + t * hidden_;                                   // [hidden]
      const float* shared = out + t * hidden_;                                   // [hidden]
      for (int64_t i = 0; i < hidden_; ++i) target[i] += shared[i] * scale;
    }
  });
}

void MixtureOfExperts::ExpertMlp(const ExpertShardWeights& expert, int64_t columns, const float* x,
                                 int64_t rows, float* out, LinearProducts& products,
                                 ThreadTeam& team) {
  float* gate = GrowTo(gate_, rows * columns);  // [rows, columns]
  float* up = GrowTo(up_, rows * columns);      // [rows, columns]
  const bool rounded =
      products.GatedLinear(x, hidden_, rows, {&expert.gate, nullptr, gate, columns},
                           {&expert.up, nullptr, up, columns}, SwiGlu, /*keep_float32=*/false,
                           &team);  // [rows, columns]
  const LinearTarget down{&expert.down, nullptr, out, hidden_};
  products.Linear(gate, columns, rows, {&down, 1}, &team, rounded);  // [rows, hidden]
}

}  // namespace actex
