// The whole forward pass of one shard, in process: a random Qwen2.5-0.5B-shaped
// model cut to 4 layers (vocabulary 4096, so the file stays small), one 2048-token
// batch of eight 256-token documents, resid_post of the last layer captured. FLOPS
// counts the projections (2 per weight) and causal attention as bench/README.md
// defines them, so the figure compares directly with BM_Sgemm at the same threads.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "model/collective.h"
#include "model/decoder_forward.h"
#include "model/random_model.h"
#include "model/shard_plan.h"

namespace actex {
namespace {

constexpr int kLayers = 4;
constexpr int kDocuments = 8, kDocumentTokens = 256;

// One model folder per dtype for the whole process, removed at exit.
class RandomModelFolder {
 public:
  explicit RandomModelFolder(const std::string& dtype) {
    char pattern[] = "/tmp/actex-forward-bench-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir_ = pattern;
    RandomModelOptions options;
    options.output_dir = dir_;
    options.preset = "qwen2.5-0.5b";
    options.vocab_size = 4096;
    options.layers = kLayers;
    options.dtype = dtype;
    auto made = MakeRandomModel(options);
    if (!made) {
      error_ = made.error();
      return;
    }
    auto weights = ModelWeights::Open(dir_);
    if (!weights) {
      error_ = weights.error();
      return;
    }
    weights_ = *weights;
  }
  ~RandomModelFolder() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  const std::shared_ptr<const ModelWeights>& weights() const { return weights_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_, error_ = "mkdtemp failed";
  std::shared_ptr<const ModelWeights> weights_;
};

const RandomModelFolder& ModelFor(const std::string& dtype) {
  static RandomModelFolder bfloat16("bfloat16"), float32("float32");
  return dtype == "float32" ? float32 : bfloat16;
}

void BM_Forward(benchmark::State& state) {
  const std::string dtype = state.range(0) == 0 ? "float32" : "bfloat16";
  const int threads = static_cast<int>(state.range(1));
  const RandomModelFolder& model = ModelFor(dtype);
  if (!model.weights()) {
    state.SkipWithError(model.error().c_str());
    return;
  }
  const ModelConfig& config = model.weights()->config();
  auto slice = PlanShard(config, 0, 1);
  // The shard's own team is its parallelism; Forward keeps OpenBLAS at one thread.
  auto shard =
      DecoderShard::Create(model.weights(), *slice, {{SiteKind::kResidPost, kLayers - 1}}, threads);
  if (!shard) {
    state.SkipWithError(shard.error().c_str());
    return;
  }
  PackedBatch batch;
  uint32_t seed = 1;
  for (int doc = 0; doc < kDocuments; ++doc) {
    for (int t = 0; t < kDocumentTokens; ++t) {
      seed = seed * 1664525u + 1013904223u;
      batch.token_ids.push_back(static_cast<int32_t>((seed >> 8) % config.vocab_size));
      batch.positions.push_back(t);
    }
    batch.sequence_lengths.push_back(kDocumentTokens);
  }
  SoloCollective solo;
  std::vector<SiteActivations> captures;
  // Untimed: maps the weights' pages and grows the activation buffers.
  if (auto warm = (*shard)->Forward(batch, solo, &captures); !warm) {
    state.SkipWithError(warm.error().c_str());
    return;
  }
  for (auto _ : state) {
    auto done = (*shard)->Forward(batch, solo, &captures);
    if (!done) {
      state.SkipWithError(done.error().c_str());
      break;
    }
  }
  const double q_width = config.heads * config.head_dim,
               kv_width = config.kv_heads * config.head_dim;
  const double weights_per_layer = 2 * config.hidden * q_width + 2 * config.hidden * kv_width +
                                   3.0 * config.hidden * config.intermediate;
  const double per_token =
      kLayers * (2 * weights_per_layer + 4 * q_width * (kDocumentTokens + 1) / 2.0);
  state.counters["FLOPS"] = benchmark::Counter(per_token * batch.token_ids.size(),
                                               benchmark::Counter::kIsIterationInvariantRate,
                                               benchmark::Counter::kIs1000);
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(batch.token_ids.size()),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(dtype);
}

BENCHMARK(BM_Forward)
    ->ArgNames({"bf16", "threads"})
    ->ArgsProduct({{1, 0}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace actex
