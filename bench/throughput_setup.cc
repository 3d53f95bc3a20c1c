#include "bench/throughput_setup.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "bench/child_process.h"
#include "model/blas_threads.h"
#include "model/config_reader.h"
#include "model/kernels/gemm.h"
#include "tests/support/parquet_test_writer.h"

namespace actex {
namespace {

constexpr const char* kCompleteMarker = ".bench-complete";

// One product X[tokens, in] · W[out, in]ᵀ on `threads` cores. OpenBLAS runs it as one
// call on that many of its own threads (how this figure has always been taken); oneDNN
// as the forward pass runs it: a share of the output features per thread, each share
// a one-thread call.
void Product(GemmBackend backend, int threads, int64_t tokens, int64_t in, int64_t out,
             const float* x, const float* w, float* y) {
  if (backend == GemmBackend::kOpenBlas) {
    GemmOnThisThread(backend, tokens, out, in, x, in, w, in, 0.0f, y, out);
    return;
  }
  const int64_t share = (out + threads - 1) / threads;
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) {
    const int64_t first = std::min(out, t * share), count = std::min(out, first + share) - first;
    helpers.emplace_back([=] {
      GemmOnThisThread(backend, tokens, count, in, x, in, w + first * in, in, 0.0f, y + first, out);
    });
  }
  GemmOnThisThread(backend, tokens, std::min(out, share), in, x, in, w, in, 0.0f, y, out);
  for (std::thread& helper : helpers) helper.join();
}

// Median seconds of Product.
double TimeProduct(GemmBackend backend, int threads, int64_t tokens, int64_t in, int64_t out,
                   int repeats) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(tokens * in)), w(static_cast<size_t>(out * in)),
      y(static_cast<size_t>(tokens * out));
  for (float& value : x) value = uniform(rng);
  for (float& value : w) value = uniform(rng);
  std::vector<double> seconds;
  for (int i = -1; i < repeats; ++i) {  // i = -1 warms up caches, pages, threads and JIT
    const auto start = std::chrono::steady_clock::now();
    Product(backend, threads, tokens, in, out, x.data(), w.data(), y.data());
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i >= 0) seconds.push_back(elapsed);
  }
  return Median(seconds);
}

}  // namespace

std::expected<ModelConfig, std::string> EnsureRandomModel(const std::string& actex_binary,
                                                          const std::string& preset,
                                                          const std::string& dir,
                                                          const std::string& tokenizer_file,
                                                          const std::string& log_path) {
  const std::filesystem::path marker = std::filesystem::path(dir) / kCompleteMarker;
  if (!std::filesystem::exists(marker)) {
    std::vector<std::string> args = {actex_binary, "make-model", "--preset", preset,
                                     "--dtype",    "bfloat16",   "--out",    dir};
    if (!tokenizer_file.empty()) args.insert(args.end(), {"--tokenizer", tokenizer_file});
    std::fprintf(stderr, "writing a random %s model to %s ...\n", preset.c_str(), dir.c_str());
    auto made = RunChild(args, log_path);
    if (!made) return std::unexpected(made.error());
    if (made->exit_code != 0) {
      return std::unexpected(JoinArgs(args) + " failed:\n" + made->output);
    }
    std::ofstream(marker) << "written by bench_extract_throughput\n";
  }
  return LoadModelConfig(dir);
}

FlopsPerToken ForwardFlopsPerToken(const ModelConfig& config, int layers_computed,
                                   int document_tokens) {
  const double hidden = config.hidden, intermediate = config.intermediate;
  const double q_width = static_cast<double>(config.heads) * config.head_dim;
  const double kv_width = static_cast<double>(config.kv_heads) * config.head_dim;
  const double attention_weights = hidden * q_width         // q_proj
                                   + 2 * hidden * kv_width  // k_proj, v_proj
                                   + q_width * hidden;      // o_proj
  // gate, up, down; GPT-2's MLP has no gate
  const double dense_mlp_weights =
      (config.mlp == MlpKind::kGeluTanh ? 2 : 3) * hidden * intermediate;
  // A routed layer computes its router, the top_k experts each token chose and the
  // shared expert with its gate: the FLOPs actually spent, not the weights held.
  const MoeConfig& moe = config.moe;
  const double routed_mlp_weights =
      hidden * moe.experts + moe.top_k * 3.0 * hidden * moe.expert_intermediate +
      (moe.shared_expert_intermediate > 0 ? 3.0 * hidden * moe.shared_expert_intermediate + hidden
                                          : 0.0);
  double weights = 0;
  for (int layer = 0; layer < layers_computed; ++layer) {
    weights +=
        attention_weights + (config.IsSparse(layer) ? routed_mlp_weights : dense_mlp_weights);
  }
  const double average_context = (document_tokens + 1) / 2.0;
  FlopsPerToken flops;
  flops.matmul = 2.0 * weights;
  flops.attention = 4.0 * q_width * average_context * layers_computed;
  return flops;
}

SgemmReference MeasureSgemm(GemmBackend backend, int64_t tokens, int64_t hidden,
                            int64_t intermediate, int threads, int repeats) {
  const int previous = BlasThreads();
  SetBlasThreads(backend == GemmBackend::kOpenBlas ? threads : 1);
  const double flops = 2.0 * tokens * hidden * intermediate;  // the same for both shapes
  const double up_seconds = TimeProduct(backend, threads, tokens, hidden, intermediate, repeats);
  const double down_seconds = TimeProduct(backend, threads, tokens, intermediate, hidden, repeats);
  SetBlasThreads(previous);
  SgemmReference reference;
  reference.up_gflops = flops / up_seconds / 1e9;
  reference.down_gflops = flops / down_seconds / 1e9;
  reference.combined_gflops = 2 * flops / (up_seconds + down_seconds) / 1e9;
  return reference;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace actex
