#ifndef ACTEX_MODEL_KERNELS_ROUTING_H_
#define ACTEX_MODEL_KERNELS_ROUTING_H_

#include <cstdint>
#include <vector>

namespace actex {

// A mixture of experts' routing, row by row in float32, as HF transformers 4.51's MoE
// blocks compute it:
//   p = softmax(logits) over all `experts`            (torch.softmax, dtype float32)
//   ids, weights = the `top_k` largest p, descending  (torch.topk; ties: lower index first)
//   weights /= sum(weights)                           (only when `renormalize`)
// `logits` and `probabilities` are [tokens, experts]; `ids` and `weights` [tokens, top_k].
// 1 <= top_k <= experts.
void RouteTopK(const float* logits, int64_t tokens, int experts, int top_k, bool renormalize,
               float* probabilities, int32_t* ids, float* weights);

// The (token, slot) assignments of `ids` ([assignments] = [tokens, top_k] flattened)
// grouped by expert, each expert's in token order (torch.where's order), by a counting
// sort: `rows` [assignments] lists token · top_k + slot, expert e's at
// rows[first_row[e], first_row[e + 1]) (`first_row` [experts + 1]). Both are resized.
void GroupByExpert(const int32_t* ids, int64_t assignments, int experts,
                   std::vector<int64_t>* first_row, std::vector<int64_t>* rows);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_ROUTING_H_
