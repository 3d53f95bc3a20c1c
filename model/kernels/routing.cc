#include "model/kernels/routing.h"

#include <cmath>

namespace actex {

void RouteTopK(const float* logits, int64_t tokens, int experts, int top_k, bool renormalize,
               float* probabilities, int32_t* ids, float* weights) {
  for (int64_t t = 0; t < tokens; ++t) {
    const float* row = logits + t * experts;  // [experts]
    float* p = probabilities + t * experts;   // [experts]
    float largest = row[0];
    for (int e = 1; e < experts; ++e) largest = std::fmax(largest, row[e]);
    // Double accumulation keeps the sum at float32's own precision for any expert count.
    double sum = 0.0;
    for (int e = 0; e < experts; ++e) {
      p[e] = std::exp(row[e] - largest);
      sum += p[e];
    }
    const float total = static_cast<float>(sum);
    for (int e = 0; e < experts; ++e) p[e] /= total;

    int32_t* chosen = ids + t * top_k;  // [top_k]
    float* chosen_weight = weights + t * top_k;
    // top_k is small (2 to 8): repeated selection of the largest not yet taken.
    for (int slot = 0; slot < top_k; ++slot) {
      int best = -1;
      for (int e = 0; e < experts; ++e) {
        bool taken = false;
        for (int earlier = 0; earlier < slot; ++earlier) taken = taken || chosen[earlier] == e;
        if (!taken && (best < 0 || p[e] > p[best])) best = e;
      }
      chosen[slot] = best;
      chosen_weight[slot] = p[best];
    }
    if (!renormalize) continue;
    float chosen_sum = 0.0f;  // HF: routing_weights.sum(dim=-1) in float32
    for (int slot = 0; slot < top_k; ++slot) chosen_sum += chosen_weight[slot];
    for (int slot = 0; slot < top_k; ++slot) chosen_weight[slot] /= chosen_sum;
  }
}

void GroupByExpert(const int32_t* ids, int64_t assignments, int experts,
                   std::vector<int64_t>* first_row, std::vector<int64_t>* rows) {
  first_row->assign(static_cast<size_t>(experts) + 1, 0);
  rows->resize(static_cast<size_t>(assignments));
  std::vector<int64_t>& next = *first_row;  // counts, then each expert's next free row
  for (int64_t i = 0; i < assignments; ++i) ++next[ids[i] + 1];
  for (int e = 0; e < experts; ++e) next[e + 1] += next[e];
  for (int64_t i = 0; i < assignments; ++i) (*rows)[next[ids[i]]++] = i;
  // Now next[e] is where expert e + 1 starts: shift back to first rows.
  for (int e = experts; e > 0; --e) next[e] = next[e - 1];
  next[0] = 0;
}

}  // namespace actex
