// Shapes: `tokens` is the packed batch length, `hidden` the model's width, `rows` the
// tokens routed to one expert, `columns` this shard's columns of an expert.

#include "model/mixture_of_experts.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/kernels/routing.h"
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
      experts_(config.moe.experts),
      top_k_(config.moe.top_k),
      first_expert_(slice.first_expert),
      end_expert_(slice.end_expert),
      renormalize_(config.moe.renormalize),
      expert_columns_(slice.end_expert_column - slice.first_expert_column),
      shared_columns_(slice.end_shared_column - slice.first_shared_column),
      first_row_(static_cast<size_t>(config.moe.experts + 1)) {}

void MixtureOfExperts::Forward(const LayerShardWeights& w, const float* normed, int64_t tokens,
                               float* shard_sum, LinearProducts& products, ThreadTeam& team) {
  float* logits = GrowTo(logits_, tokens * experts_);  // [tokens, experts]
  products.Linear(normed, hidden_, tokens, w.router, nullptr, logits, experts_);
  float* probabilities = GrowTo(probabilities_, tokens * experts_);  // [tokens, experts]
  int32_t* ids = GrowTo(ids_, tokens * top_k_);                      // [tokens, top_k]
  float* weights = GrowTo(weights_, tokens * top_k_);                // [tokens, top_k]
  team.ForRanges(tokens, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    RouteTopK(logits + first * experts_, end - first, experts_, top_k_, renormalize_,
              probabilities + first * experts_, ids + first * top_k_, weights + first * top_k_);
  });
  GroupByExpert(tokens);

  team.ForRanges(tokens * hidden_, kTeamElementGrain, [&](int64_t first, int64_t end, int) {
    std::fill(shard_sum + first, shard_sum + end, 0.0f);
  });  // [tokens, hidden]
  // HF's order: expert by expert, each adding into the tokens it serves (the other
  // shards' experts come in with the all-reduce).
  for (int e = first_expert_; e < end_expert_; ++e) {
    RunExpert(e, w.experts[e], normed, shard_sum, products, team);
  }
  if (!w.shared_expert_gate.empty()) {
    AddSharedExpert(w, normed, tokens, shard_sum, products, team);
  }
}

// A counting sort of the (token, slot) pairs by expert: count, prefix-sum into first
// rows, then place each pair at its expert's next free row.
void MixtureOfExperts::GroupByExpert(int64_t tokens) {
  std::fill(first_row_.begin(), first_row_.end(), 0);
  for (int64_t i = 0; i < tokens * top_k_; ++i) ++first_row_[ids_[i] + 1];
  for (int e = 0; e < experts_; ++e) first_row_[e + 1] += first_row_[e];
  int64_t* rows = GrowTo(rows_of_, tokens * top_k_);
  std::vector<int64_t>& next = first_row_;  // each expert's next free row while filling
  for (int64_t i = 0; i < tokens * top_k_; ++i) rows[next[ids_[i]]++] = i;
  // Now next[e] is where expert e + 1 starts: shift back to first rows.
  for (int e = experts_; e > 0; --e) next[e] = next[e - 1];
  next[0] = 0;
}

void MixtureOfExperts::RunExpert(int e, const ExpertShardWeights& expert, const float* normed,
                                 float* shard_sum, LinearProducts& products, ThreadTeam& team) {
  const int64_t first = first_row_[e], count = first_row_[e + 1] - first;
  if (count == 0 || expert_columns_ == 0) return;
  const int64_t* routed = rows_of_.data() + first;       // [count]: token · top_k + slot
  float* gathered = GrowTo(gathered_, count * hidden_);  // [count, hidden]
  team.ForRanges(count, kTeamRowGrain, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      std::memcpy(gathered + r * hidden_, normed + (routed[r] / top_k_) * hidden_,
                  static_cast<size_t>(hidden_) * sizeof(float));
    }
  });
  float* out = GrowTo(expert_out_, count * hidden_);  // [count, hidden]
  ExpertMlp(expert, expert_columns_, gathered, count, out, products, team);
  // Each token appears once per expert, so rows can be added in parallel.
  team.ForRanges(count, kTeamRowGrain, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      const float weight = weights_[routed[r]];
      float* target = shard_sum + (routed[r] / top_k_) * hidden_;  // [hidden]
      const float* row = out + r * hidden_;                        // [hidden]
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
  products.Linear(x, hidden_, rows, expert.gate, nullptr, gate, columns, &team);
  products.Linear(x, hidden_, rows, expert.up, nullptr, up, columns, &team);
  team.ForRanges(rows * columns, kTeamElementGrain, [&](int64_t first, int64_t end, int) {
    SwiGlu(gate + first, up + first, end - first, gate + first);
  });  // [rows, columns]
  products.Linear(gate, columns, rows, expert.down, nullptr, out, hidden_, &team);
}

}  // namespace actex
