// The per-site statistics the shard writer keeps (storage/site_statistics.h), at
// Qwen2.5-0.5B's width, in tokens/s for one site: compare with BM_Forward's
// tokens/s for its 4 layers in the same run (one site per layer is the densest
// common capture, e.g. resid_post of layers 0-3).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "storage/site_statistics.h"

namespace actex {
namespace {

void BM_SiteStatistics(benchmark::State& state) {
  const int width = static_cast<int>(state.range(0));
  const int64_t tokens = 2048;
  std::vector<float> rows(static_cast<size_t>(tokens * width));
  std::mt19937 random(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& value : rows) value = normal(random);
  SiteStatistics statistics(width);
  for (auto _ : state) {
    statistics.AddRows(rows.data(), tokens);
    benchmark::DoNotOptimize(statistics);
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_SiteStatistics)->ArgName("width")->Arg(896)->Arg(3584)->UseRealTime();

}  // namespace
}  // namespace actex
