#include "model/expert_routing.h"

#include "model/kernels/routing.h"

namespace actex {

ExpertRouting::ExpertRouting(const ModelConfig& config, const ShardSlice& slice)
    : experts_(config.moe.experts),
      top_k_(config.moe.top_k),
      first_expert_(slice.first_expert),
      end_expert_(slice.end_expert),
      renormalize_(config.moe.renormalize),
      first_row_(static_cast<size_t>(config.moe.experts + 1)) {}

float* ExpertRouting::LogitsFor(int64_t tokens) {
  const size_t size = static_cast<size_t>(tokens * experts_);
  if (logits_.size() < size) logits_.resize(size);
  return logits_.data();
}

void ExpertRouting::Route(int64_t tokens, ThreadTeam& team) {
  probabilities_.resize(static_cast<size_t>(tokens * experts_));  // [tokens, experts]
  ids_.resize(static_cast<size_t>(tokens * top_k_));              // [tokens, top_k]
  weights_.resize(static_cast<size_t>(tokens * top_k_));          // [tokens, top_k]
  team.ForRanges(tokens, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    RouteTopK(logits_.data() + first * experts_, end - first, experts_, top_k_, renormalize_,
              probabilities_.data() + first * experts_, ids_.data() + first * top_k_,
              weights_.data() + first * top_k_);
  });
  GroupByExpert(ids_.data(), tokens * top_k_, experts_, &first_row_, &rows_of_);
}

}  // namespace actex
