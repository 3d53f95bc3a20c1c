#ifndef ACTEX_MODEL_MIXTURE_OF_EXPERTS_H_
#define ACTEX_MODEL_MIXTURE_OF_EXPERTS_H_

#include <cstdint>
#include <vector>

#include "model/expert_routing.h"
#include "model/kernels/linear_products.h"
#include "model/kernels/thread_team.h"
#include "model/model_config.h"
#include "model/shard_plan.h"
#include "model/shard_weights.h"

namespace actex {

// One shard's part of a mixture-of-experts MLP (mixtral, qwen2_moe, qwen3_moe, olmoe), as
// HF transformers 4.51's sparse MoE blocks compute it
// (tests/fixtures/moe-families/README.md):
//   router_logits = n · W_routerᵀ                  [tokens, experts]
//   p = softmax(router_logits); ids, weights = top_k of p (renormalised when the family does)
//   out = Σ over experts e in index order, at the tokens routed to e:
//         weight · down_e(silu(gate_e(n)) · up_e(n))
//   qwen2_moe: out += sigmoid(n · w_shared_gate) · shared_down(silu(shared_gate(n)) · shared_up(n))
// Each shard holds whole experts or a column slice of every expert (shard_plan.h), and
// a column slice of the shared expert, so its `out` is a partial sum that the caller's
// all-reduce completes, like a dense MLP's down_proj. Each expert runs as grouped products over the
// rows of the tokens routed to it, never over every token. Buffers grow to the largest batch and
// are reused.
class MixtureOfExperts {
 public:
  MixtureOfExperts(const ModelConfig& config, const ShardSlice& slice);

  // Routes the `tokens` rows of `normed` ([tokens, hidden], the MLP's normed input, the
  // same on every shard) and writes this shard's partial sum of the block's output into
  // `shard_sum` ([tokens, hidden]). The router runs as one float32 product on the
  // calling thread, whatever the team and the precision, so every shard computes the
  // same logits to the bit and routes every token alike; the experts' products are made
  // by `products`, at its precision. The routing stays readable below until the next call.
  void Forward(const LayerShardWeights& w, const float* normed, int64_t tokens, float* shard_sum,
               LinearProducts& products, ThreadTeam& team);

  RoutingOutputs routing() const { return routing_.outputs(); }

 private:
  // Adds weight · expert(n) at expert `e`'s tokens into `shard_sum`.
  void RunExpert(int e, const ExpertShardWeights& expert, const float* normed, float* shard_sum,
                 LinearProducts& products, ThreadTeam& team);
  // qwen2_moe: adds sigmoid(n · gate) · shared_expert(n) at every token into `shard_sum`.
  void AddSharedExpert(const LayerShardWeights& w, const float* normed, int64_t tokens,
                       float* shard_sum, LinearProducts& products, ThreadTeam& team);
  // down(silu(gate(x)) · up(x)) of this shard's `columns` over `rows` rows of `x`
  // ([rows, hidden]) into `out` ([rows, hidden], a partial sum).
  void ExpertMlp(const ExpertShardWeights& expert, int64_t columns, const float* x, int64_t rows,
                 float* out, LinearProducts& products, ThreadTeam& team);

  int64_t hidden_;
  int64_t expert_columns_, shared_columns_;  // this shard's columns of each
  ExpertRouting routing_;

  // Reused across calls.
  std::vector<float> gathered_, gate_, up_, expert_out_;  // [rows, hidden or columns]
};

}  // namespace actex

#endif  // ACTEX_MODEL_MIXTURE_OF_EXPERTS_H_
