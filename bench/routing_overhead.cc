#include "bench/routing_overhead.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "bench/stopwatch.h"
#include "bench/throughput_setup.h"
#include "model/blas_threads.h"
#include "model/kernels/linear.h"
#include "model/kernels/linear_products.h"
#include "model/kernels/swiglu.h"
#include "model/kernels/thread_team.h"
#include "model/mixture_of_experts.h"
#include "model/model_weights.h"
#include "model/shard_plan.h"
#include "model/shard_weights.h"

namespace actex {

std::expected<RoutingOverhead, std::string> MeasureRoutingOverhead(const std::string& model_dir,
                                                                   int64_t tokens, int threads,
                                                                   int repeats) {
  auto weights = ModelWeights::Open(model_dir);
  if (!weights) return std::unexpected(weights.error());
  const ModelConfig& config = (*weights)->config();
  RoutingOverhead overhead{.threads = threads};
  while (overhead.layer < config.layers && !config.IsSparse(overhead.layer)) ++overhead.layer;
  if (overhead.layer == config.layers) {
    return std::unexpected(model_dir + " has no mixture-of-experts layer");
  }
  auto slice = PlanShard(config, 0, 1);
  if (!slice) return std::unexpected(slice.error());
  auto shard = SliceShardWeights(**weights, *slice, overhead.layer);
  if (!shard) return std::unexpected(shard.error());
  const LayerShardWeights& layer = shard->layers[overhead.layer];

  const int64_t hidden = config.hidden, columns = config.moe.expert_intermediate;
  std::mt19937 random(2026);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> normed(static_cast<size_t>(tokens * hidden));  // [tokens, hidden]
  for (float& value : normed) value = normal(random);
  std::vector<float> shard_sum(normed.size());  // [tokens, hidden]
  std::vector<float> widen_scratch;
  SetBlasThreads(1);  // the team is the parallelism, as in a forward
  ThreadTeam team(threads);
  MixtureOfExperts block(config, *slice);
  LinearProducts products(Precision::kFp32);
  auto run_block = [&] {
    block.Forward(layer, normed.data(), tokens, shard_sum.data(), products, team);
  };
  run_block();  // warm-up (page faults, buffers grown), and the routing the products reuse

  std::vector<int64_t> rows_of_expert(static_cast<size_t>(config.moe.experts));
  for (int64_t i = 0; i < tokens * config.moe.top_k; ++i)
    ++rows_of_expert[block.routing().expert_ids[i]];
  const int64_t most_rows = *std::ranges::max_element(rows_of_expert);
  std::vector<float> gate(static_cast<size_t>(most_rows * columns));  // [rows, columns]
  std::vector<float> up(gate.size());                                 // [rows, columns]
  std::vector<float> out(static_cast<size_t>(most_rows * hidden));    // [rows, hidden]
  auto run_products = [&] {
    for (int e = 0; e < config.moe.experts; ++e) {
      const int64_t rows = rows_of_expert[e];
      if (rows == 0) continue;
      const ExpertShardWeights& expert = layer.experts[e];
      Linear(normed.data(), hidden, rows, expert.gate, nullptr, gate.data(), columns,
             &widen_scratch, &team);
      Linear(normed.data(), hidden, rows, expert.up, nullptr, up.data(), columns, &widen_scratch,
             &team);
      team.ForRanges(rows * columns, kTeamElementGrain, [&](int64_t first, int64_t end, int) {
        SwiGlu(gate.data() + first, up.data() + first, end - first, gate.data() + first);
      });
      Linear(gate.data(), columns, rows, expert.down, nullptr, out.data(), hidden, &widen_scratch,
             &team);
    }
  };
  run_products();
  // Interleaved, so that a change of load on a shared machine hits both alike.
  std::vector<double> block_seconds, products_seconds;
  for (int i = 0; i < repeats; ++i) {
    block_seconds.push_back(SecondsToRun(run_block));
    products_seconds.push_back(SecondsToRun(run_products));
  }
  overhead.block_seconds = Median(block_seconds);
  overhead.products_seconds = Median(products_seconds);
  return overhead;
}

std::string RoutingOverheadLine(const std::string& model, int64_t tokens,
                                const RoutingOverhead& overhead) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "routing overhead, %s layer %d, %lld tokens, %d threads: block %.1f ms, the "
                "experts' products alone %.1f ms: %.1f %% of the block",
                model.c_str(), overhead.layer, static_cast<long long>(tokens), overhead.threads,
                overhead.block_seconds * 1e3, overhead.products_seconds * 1e3,
                overhead.share() * 100);
  return line;
}

}  // namespace actex
