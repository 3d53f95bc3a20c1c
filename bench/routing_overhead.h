#ifndef ACTEX_BENCH_ROUTING_OVERHEAD_H_
#define ACTEX_BENCH_ROUTING_OVERHEAD_H_

#include <cstdint>
#include <expected>
#include <string>

namespace actex {

// What routing costs a mixture-of-experts layer, measured in process on the first routed
// layer of a model folder (one shard of one): the whole block as the forward runs it
// (router product, softmax and top-k, grouping, gathers, the experts' products and the
// weighted scatter) against the same experts' products alone (gate, up, SwiGLU, down)
// over as many contiguous rows as each expert received. Both on `threads` team members,
// over `tokens` rows of seeded random input; medians of `repeats` interleaved runs of
// each after a warm-up.
struct RoutingOverhead {
  int layer = 0;
  int threads = 1;
  double block_seconds = 0;
  double products_seconds = 0;
  // The share of the block that is not the experts' products.
  double share() const { return 1.0 - products_seconds / block_seconds; }
};

std::expected<RoutingOverhead, std::string> MeasureRoutingOverhead(const std::string& model_dir,
                                                                   int64_t tokens, int threads,
                                                                   int repeats);

// "routing overhead, MODEL layer L, T tokens: block X ms, experts' products alone Y ms:
// Z % of the block".
std::string RoutingOverheadLine(const std::string& model, int64_t tokens,
                                const RoutingOverhead& overhead);

}  // namespace actex

#endif  // ACTEX_BENCH_ROUTING_OVERHEAD_H_
