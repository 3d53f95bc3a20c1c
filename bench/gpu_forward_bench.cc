// bench_gpu_forward: the forward pass of one shard on a GPU (gpu/), alone, against
// cuBLAS's own rate on the model's product shapes measured in the same run.
//
// A random model of a preset's real widths (BF16 weights, vocabulary 4096, --layers of
// them) runs batches of 256-token documents (resid_post of the last layer captured, so
// the tap copy is in the figure) for each --precision and --batch-tokens. FLOPs count
// the projections (2 per weight) and causal attention as bench/README.md defines them.
// The cuBLAS figure is the same FLOPs of one layer's seven products at the same token
// count, each timed alone (cudaEvent) in the precision's own call (fp32: cublasSgemm,
// TF32 off; bf16: cublasGemmEx, BF16 inputs, FP32 accumulation), over their summed time.
// With --actex, each precision also runs end to end through the real pipeline
// (bench/gpu_pipeline_run.h) at --e2e-batch-tokens: tokens/s against the same run's
// cuBLAS rate, the forward's share of the shard's time and where the rest went.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/gpu_pipeline_run.h"
#include "gpu/cuda_shard_device.h"
#include "model/collective.h"
#include "model/decoder_forward.h"
#include "model/random_model.h"
#include "model/shard_plan.h"

namespace actex {
namespace {

constexpr int kDocumentTokens = 256;

struct Flags {
  std::string preset = "qwen2.5-0.5b";
  int layers = 0;  // 0: the preset's own
  std::vector<int64_t> batch_tokens = {8192, 16384, 32768};
  std::vector<std::string> precisions = {"fp32", "bf16"};
  int iterations = 5;
  std::string folder = "/dev/shm/actex-gpu-bench";
  std::string actex;  // end to end too when given
  int documents = 8192;
  int64_t e2e_batch_tokens = 16384;
};

// FLOPs per token of the layers computed, as bench/README.md counts them.
double FlopsPerToken(const ModelConfig& config, int layers) {
  const double hidden = config.hidden,
               q_width = static_cast<double>(config.heads) * config.head_dim;
  const double kv_width = static_cast<double>(config.kv_heads) * config.head_dim;
  const double projections =
      2 * (hidden * (2 * q_width + 2 * kv_width) + 3 * hidden * config.intermediate);
  const double attention = 4 * q_width * (kDocumentTokens + 1) / 2.0;
  return layers * (projections + attention);
}

// cuBLAS's FLOP/s over one layer's seven products at `tokens` rows.
double CublasRate(const ModelConfig& config, int64_t tokens, Precision precision, int repeats = 5) {
  const int64_t hidden = config.hidden, q_width = int64_t{config.heads} * config.head_dim;
  const int64_t kv_width = int64_t{config.kv_heads} * config.head_dim;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {// {out, in}
                                                           {q_width, hidden},
                                                           {kv_width, hidden},
                                                           {kv_width, hidden},
                                                           {hidden, q_width},
                                                           {config.intermediate, hidden},
                                                           {config.intermediate, hidden},
                                                           {hidden, config.intermediate}};
  const size_t element = precision == Precision::kBf16 ? 2 : 4;
  const int64_t widest = std::max<int64_t>(config.intermediate, std::max(hidden, q_width));
  void *x = nullptr, *w = nullptr, *y = nullptr;
  cudaMalloc(&x, tokens * widest * element);
  cudaMalloc(&w, widest * widest * element);
  cudaMalloc(&y, tokens * widest * sizeof(float));
  cudaMemset(x, 0x3c, tokens * widest * element);
  cudaMemset(w, 0x3c, widest * widest * element);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const float one = 1.0f, zero = 0.0f;
  double seconds = 0, flops = 0;
  for (const auto& [out, in] : shapes) {
    auto product = [&] {
      if (precision == Precision::kBf16) {
        cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, out, tokens, in, &one, w, CUDA_R_16BF, in, x,
                     CUDA_R_16BF, in, &zero, y, CUDA_R_32F, out, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
      } else {
        cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, out, tokens, in, &one, static_cast<float*>(w),
                    in, static_cast<float*>(x), in, &zero, static_cast<float*>(y), out);
      }
    };
    product();  // warm-up: cuBLAS picks and loads its kernel
    cudaEventRecord(start);
    for (int r = 0; r < repeats; ++r) product();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float milliseconds = 0;
    cudaEventElapsedTime(&milliseconds, start, stop);
    seconds += milliseconds / 1e3 / repeats;
    flops += 2.0 * out * in * tokens;
  }
  cublasDestroy(handle);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(x);
  cudaFree(w);
  cudaFree(y);
  return flops / seconds;
}

// The real pipeline at `precision` on the model in `model_dir`, printed as a line.
bool PrintEndToEnd(const Flags& flags, const std::string& model_dir, const ModelConfig& config,
                   const std::string& name, Precision precision) {
  auto figures = RunGpuPipeline({.actex = flags.actex,
                                 .model_dir = model_dir,
                                 .folder = flags.folder + "/e2e",
                                 .documents = flags.documents,
                                 .document_tokens = kDocumentTokens,
                                 .vocabulary = config.vocab_size,
                                 .last_layer = config.layers - 1,
                                 .precision = name,
                                 .batch_tokens = flags.e2e_batch_tokens});
  if (!figures) {
    std::fprintf(stderr, "bench_gpu_forward: end to end: %s\n", figures.error().c_str());
    return false;
  }
  const double rate = figures->tokens_per_second * FlopsPerToken(config, config.layers);
  const double cublas = CublasRate(config, flags.e2e_batch_tokens, precision);
  std::printf(
      "end to end %s, %lld-token batches, %d documents: %.0f tokens/s, %.1f TFLOP/s, %.2f x "
      "cuBLAS (%.1f TF/s); the forward %.0f %% of the shard's time (%.0f tokens/s alone in "
      "the pipeline), waiting for batches %.2f s, handing on %.2f s\n",
      name.c_str(), static_cast<long long>(flags.e2e_batch_tokens), flags.documents,
      figures->tokens_per_second, rate / 1e12, rate / cublas, cublas / 1e12,
      100 * figures->forward_share, figures->forward_tokens_per_second, figures->waiting_seconds,
      figures->handing_on_seconds);
  return true;
}

PackedBatch Documents(int64_t tokens, int32_t vocabulary) {
  PackedBatch batch;
  for (int64_t t = 0; t < tokens; ++t) {
    batch.token_ids.push_back(static_cast<int32_t>((t * 7919) % vocabulary));
    batch.positions.push_back(static_cast<int32_t>(t % kDocumentTokens));
  }
  batch.sequence_lengths.assign(static_cast<size_t>(tokens / kDocumentTokens), kDocumentTokens);
  return batch;
}

int Run(const Flags& flags) {
  auto gpus = UsableGpuCount();
  if (!gpus) {
    std::fprintf(stderr, "bench_gpu_forward: %s\n", gpus.error().c_str());
    return 1;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  RandomModelOptions options;
  options.output_dir = flags.folder + "/" + flags.preset;
  options.preset = flags.preset;
  options.vocab_size = 4096;
  options.layers = flags.layers;
  options.dtype = "bfloat16";
  auto made = MakeRandomModel(options);
  if (!made) {
    std::fprintf(stderr, "bench_gpu_forward: %s\n", made.error().c_str());
    return 1;
  }
  auto weights = ModelWeights::Open(options.output_dir);
  if (!weights) {
    std::fprintf(stderr, "bench_gpu_forward: %s\n", weights.error().c_str());
    return 1;
  }
  const ModelConfig& config = (*weights)->config();
  std::printf(
      "GPU %s (%d multiprocessors), %s shapes, %d layers, BF16 weights, %d-token documents\n",
      properties.name, properties.multiProcessorCount, flags.preset.c_str(), config.layers,
      kDocumentTokens);
  std::printf("%-9s %12s %12s %10s %12s %8s\n", "precision", "batch tokens", "tokens/s", "TFLOP/s",
              "cuBLAS TF/s", "x cuBLAS");
  for (const std::string& name : flags.precisions) {
    auto precision = ParsePrecision(name);
    if (!precision) {
      std::fprintf(stderr, "bench_gpu_forward: %s\n", precision.error().c_str());
      return 1;
    }
    auto slice = PlanShard(config, 0, 1);
    auto shard = DecoderShard::Create(*weights, *slice, {{SiteKind::kResidPost, config.layers - 1}},
                                      CudaShardDevices({.gpu = 0, .precision = *precision}));
    if (!shard) {
      std::fprintf(stderr, "bench_gpu_forward: %s\n", shard.error().c_str());
      return 1;
    }
    for (int64_t tokens : flags.batch_tokens) {
      const PackedBatch batch = Documents(tokens, config.vocab_size);
      SoloCollective solo;
      std::vector<SiteActivations> captures;
      for (int warm = 0; warm < 2; ++warm) {
        if (auto done = (*shard)->Forward(batch, solo, &captures); !done) {
          std::fprintf(stderr, "bench_gpu_forward: %s\n", done.error().c_str());
          return 1;
        }
      }
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < flags.iterations; ++i) (void)(*shard)->Forward(batch, solo, &captures);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
          flags.iterations;
      const double tokens_per_second = tokens / seconds;
      const double rate = tokens_per_second * FlopsPerToken(config, config.layers);
      const double cublas = CublasRate(config, tokens, *precision, flags.iterations);
      std::printf("%-9s %12lld %12.0f %10.1f %12.1f %8.2f\n", name.c_str(),
                  static_cast<long long>(tokens), tokens_per_second, rate / 1e12, cublas / 1e12,
                  rate / cublas);
    }
    shard->reset();  // its GPU memory, before the pipeline's own shard takes the GPU
    if (!flags.actex.empty() &&
        !PrintEndToEnd(flags, options.output_dir, config, name, *precision)) {
      return 1;
    }
  }
  std::filesystem::remove_all(flags.folder);
  return 0;
}

}  // namespace
}  // namespace actex

int main(int argc, char** argv) {
  actex::Flags flags;
  CLI::App app{"bench_gpu_forward: one shard's forward on GPU 0 against cuBLAS's own rate"};
  app.add_option("--preset", flags.preset, "make-model preset (qwen2.5-0.5b, qwen2.5-7b, ...)")
      ->capture_default_str();
  app.add_option("--layers", flags.layers, "layers of the random model (0: the preset's)")
      ->capture_default_str();
  app.add_option("--batch-tokens", flags.batch_tokens, "tokens per batch, multiples of 256")
      ->capture_default_str();
  app.add_option("--precision", flags.precisions, "fp32 and/or bf16")->capture_default_str();
  app.add_option("--iterations", flags.iterations, "timed forwards per batch size")
      ->capture_default_str();
  app.add_option("--folder", flags.folder, "where the random model is written (tmpfs is best)")
      ->capture_default_str();
  app.add_option("--actex", flags.actex,
                 "the actex executable: also run each precision end to end through the real "
                 "pipeline (default: the forward alone)");
  app.add_option("--documents", flags.documents, "end to end: 256-token documents")
      ->capture_default_str();
  app.add_option("--e2e-batch-tokens", flags.e2e_batch_tokens, "end to end: --batch-tokens")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return actex::Run(flags);
}
