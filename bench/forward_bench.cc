// The whole forward pass of one shard, in process (BM_FamilyForward: the same for each
// family preset, 2 layers): a random Qwen2.5-0.5B-shaped model cut to 4 layers (vocabulary 4096, so
// the file stays small), one 2048-token batch of eight 256-token documents, resid_post of the last
// layer captured; BM_Forward runs it with fp32 and with bf16 products (--precision). FLOPS counts
// the projections (2 per weight) and causal attention as bench/README.md defines them, so the
// figure compares directly with BM_Sgemm at the same threads.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/collective.h"
#include "model/cpu_shard_device.h"
#include "model/decoder_forward.h"
#include "model/kernels/cpu_isa.h"
#include "model/precision.h"
#include "model/random_model.h"
#include "model/shard_plan.h"

namespace actex {
namespace {

constexpr int kLayers = 4;
constexpr int kDocuments = 8, kDocumentTokens = 256;

// One model folder per dtype (and per family preset) for the whole process, removed at
// exit. `edit_config` may rewrite its config.json before it is opened.
class RandomModelFolder {
 public:
  RandomModelFolder(const std::string& dtype, const std::string& preset = "qwen2.5-0.5b",
                    int layers = kLayers, void (*edit_config)(nlohmann::json&) = nullptr) {
    char pattern[] = "/tmp/actex-forward-bench-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir_ = pattern;
    RandomModelOptions options;
    options.output_dir = dir_;
    options.preset = preset;
    options.vocab_size = 4096;
    options.layers = layers;
    options.dtype = dtype;
    auto made = MakeRandomModel(options);
    if (!made) {
      error_ = made.error();
      return;
    }
    if (edit_config != nullptr) {
      const std::string path = dir_ + "/config.json";
      nlohmann::json config = nlohmann::json::parse(std::ifstream(path));
      edit_config(config);
      std::ofstream(path) << config.dump(2);
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

// The family presets at their real widths, 2 layers (the 7B-wide ones would otherwise
// take gigabytes of /tmp), BF16; "gemma-2-2b-plain" is Gemma 2 without its attention
// softcap and with a window longer than any document, to price those features.
constexpr int kFamilyLayers = 2;
const std::vector<std::string>& FamilyPresets() {
  static const auto* presets = new std::vector<std::string>{
      "gpt2", "llama-3.2-1b", "gemma-2-2b", "gemma-2-2b-plain", "qwen3-0.6b", "mistral-7b"};
  return *presets;
}

const RandomModelFolder& FamilyModel(const std::string& preset) {
  static std::map<std::string, std::unique_ptr<RandomModelFolder>> folders;
  auto& folder = folders[preset];
  if (!folder) {
    const bool plain = preset == "gemma-2-2b-plain";
    folder = std::make_unique<RandomModelFolder>(
        "bfloat16", plain ? "gemma-2-2b" : preset, kFamilyLayers,
        plain ? +[](nlohmann::json& config) {
          config["attn_logit_softcapping"] = nullptr;
          config["sliding_window"] = 1 << 20;
        }
              : nullptr);
  }
  return *folder;
}

void RunForward(benchmark::State& state, const RandomModelFolder& model, int threads, int layers,
                Precision precision = Precision::kFp32);

// bf16: the weights' dtype; precision: 0 fp32 products, 1 bf16 products (--precision).
void BM_Forward(benchmark::State& state) {
  const std::string dtype = state.range(0) == 0 ? "float32" : "bfloat16";
  const int threads = static_cast<int>(state.range(1));
  const Precision precision = state.range(2) == 0 ? Precision::kFp32 : Precision::kBf16;
  RunForward(state, ModelFor(dtype), threads, kLayers, precision);
  state.SetLabel(dtype + " weights, " + PrecisionName(precision) + " products, " + CpuModelName());
}

void BM_FamilyForward(benchmark::State& state) {
  const std::string& preset = FamilyPresets()[static_cast<size_t>(state.range(0))];
  RunForward(state, FamilyModel(preset), static_cast<int>(state.range(1)), kFamilyLayers);
  state.SetLabel(preset);
}

void RunForward(benchmark::State& state, const RandomModelFolder& model, int threads, int layers,
                Precision precision) {
  if (!model.weights()) {
    state.SkipWithError(model.error().c_str());
    return;
  }
  const ModelConfig& config = model.weights()->config();
  auto slice = PlanShard(config, 0, 1);
  // The shard's own team is its parallelism; Forward keeps OpenBLAS at one thread.
  auto shard = DecoderShard::Create(model.weights(), *slice, {{SiteKind::kResidPost, layers - 1}},
                                    CpuShardDevices(threads, precision));
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
  const double mlp_matrices = config.mlp == MlpKind::kGeluTanh ? 2.0 : 3.0;  // GPT-2: no gate
  const double weights_per_layer = 2 * config.hidden * q_width + 2 * config.hidden * kv_width +
                                   mlp_matrices * config.hidden * config.intermediate;
  const double per_token =
      layers * (2 * weights_per_layer + 4 * q_width * (kDocumentTokens + 1) / 2.0);
  state.counters["FLOPS"] = benchmark::Counter(per_token * batch.token_ids.size(),
                                               benchmark::Counter::kIsIterationInvariantRate,
                                               benchmark::Counter::kIs1000);
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(batch.token_ids.size()),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Forward)
    ->ArgNames({"bf16", "threads", "precision"})
    ->ArgsProduct({{1, 0}, {1, 2}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_FamilyForward)
    ->ArgNames({"family", "threads"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace actex
