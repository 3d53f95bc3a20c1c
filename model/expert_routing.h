#ifndef ACTEX_MODEL_EXPERT_ROUTING_H_
#define ACTEX_MODEL_EXPERT_ROUTING_H_

#include <cstdint>
#include <vector>

#include "model/kernels/thread_team.h"
#include "model/model_config.h"
#include "model/shard_plan.h"

namespace actex {

// A mixture-of-experts layer's routing, in host memory: what its sites capture.
struct RoutingOutputs {
  const float* router_logits;   // [tokens, experts]
  const int32_t* expert_ids;    // [tokens, top_k]
  const float* expert_weights;  // [tokens, top_k]
};

// One batch's routing on the host, shared by the CPU's and the GPU's mixture of experts
// (model/mixture_of_experts.h, gpu/gpu_experts.h): the router's logits in, each token's
// experts and weights out (kernels/routing.h's RouteTopK), and the (token, slot)
// assignments grouped by expert (GroupByExpert) for the experts this shard computes.
// Buffers grow to the largest batch and are reused.
class ExpertRouting {
 public:
  ExpertRouting(const ModelConfig& config, const ShardSlice& slice);

  // Where the router's logits of `tokens` tokens go: [tokens, experts].
  float* LogitsFor(int64_t tokens);
  // Routes the `tokens` rows of those logits, their rows shared out over `team`.
  void Route(int64_t tokens, ThreadTeam& team);

  int top_k() const { return top_k_; }
  // The experts this shard computes: [first_expert, end_expert).
  int first_expert() const { return first_expert_; }
  int end_expert() const { return end_expert_; }
  // Expert e's assignments, token · top_k + slot in token order:
  // assignments()[first_assignment(e), first_assignment(e + 1)).
  int64_t first_assignment(int e) const { return first_row_[e]; }
  const int64_t* assignments() const { return rows_of_.data(); }
  // The weight of assignment token · top_k + slot.
  float weight(int64_t assignment) const { return weights_[assignment]; }
  RoutingOutputs outputs() const {
    return {.router_logits = logits_.data(),
            .expert_ids = ids_.data(),
            .expert_weights = weights_.data()};
  }

 private:
  int experts_, top_k_;
  int first_expert_, end_expert_;
  bool renormalize_;
  std::vector<float> logits_, probabilities_;  // [tokens, experts]
  std::vector<int32_t> ids_;                   // [tokens, top_k]
  std::vector<float> weights_;                 // [tokens, top_k]
  std::vector<int64_t> first_row_;             // [experts + 1]
  std::vector<int64_t> rows_of_;               // [tokens * top_k]
};

}  // namespace actex

#endif  // ACTEX_MODEL_EXPERT_ROUTING_H_
