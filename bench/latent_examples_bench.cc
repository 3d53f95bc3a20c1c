// The shard writer's per-latent top examples (storage/latent_examples.h) for one 16×
// SAE on a Qwen2.5-0.5B site (d_sae 14336 = 896 × 16, K 64 stored latents, N 32
// examples), in tokens/s of AddToken: an extraction's tokens/s (bench/README.md)
// divided by it is the examples' share of extraction time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "storage/latent_examples.h"

namespace actex {
namespace {

void BM_LatentExamples(benchmark::State& state) {
  const int64_t latents = state.range(0), stored = 64, examples = 32, tokens = 16384;
  // Each token's 64 strongest latents: distinct ids, values descending as the encoder
  // stores them, drawn from an exponential tail as SAE activations roughly are.
  std::mt19937 random(1);
  std::exponential_distribution<float> strength(1.0f);
  std::vector<int32_t> all(static_cast<size_t>(latents));
  for (int64_t latent = 0; latent < latents; ++latent) all[latent] = static_cast<int32_t>(latent);
  std::vector<int32_t> ids(static_cast<size_t>(tokens * stored));  // [tokens, K]
  std::vector<float> values(ids.size());                           // [tokens, K]
  for (int64_t token = 0; token < tokens; ++token) {
    for (int64_t k = 0; k < stored; ++k) {
      std::swap(all[k], all[k + random() % (latents - k)]);
      ids[token * stored + k] = all[k];
      values[token * stored + k] = strength(random);
    }
    std::sort(values.begin() + token * stored, values.begin() + (token + 1) * stored,
              std::greater<>());
  }
  LatentExamples kept(latents, examples);
  int64_t doc_id = 0;
  for (auto _ : state) {
    for (int64_t token = 0; token < tokens; ++token) {
      const size_t at = static_cast<size_t>(token * stored);
      auto added = kept.AddToken(doc_id + token / 512, static_cast<int32_t>(token % 512),
                                 {ids.data() + at, static_cast<size_t>(stored)},
                                 {values.data() + at, static_cast<size_t>(stored)});
      benchmark::DoNotOptimize(added);
    }
    doc_id += tokens / 512;
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_LatentExamples)->ArgName("d_sae")->Arg(14336)->UseRealTime();

}  // namespace
}  // namespace actex
