#ifndef ACTEX_MODEL_KERNELS_ROUTING_H_
#define ACTEX_MODEL_KERNELS_ROUTING_H_

#include <cstdint>

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

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_ROUTING_H_
