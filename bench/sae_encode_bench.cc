// SAE encoding (sae/sae_encoder.h) at the Qwen2.5-0.5B residual width: tokens/s of
// SaeEncoder::EncodeTopK against the bare sgemm of the same product measured in the same
// run, its share of a forward pass, and the bytes a token costs on disk as dense bf16
// against as latents. See bench/README.md.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/stopwatch.h"
#include "model/blas_threads.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"
#include "model/kernels/thread_team.h"
#include "sae/sae_encoder.h"

namespace actex {
namespace {

// FLOPs per token of a 24-layer Qwen2.5-0.5B forward's products and attention at 256-token
// documents (bench/README.md, "The figures"): what the encoding is a share of.
constexpr double kForwardFlopsPerToken = 726.7e6;

// The flags (main), defaults the Qwen2.5-0.5B residual stream and a 2-core machine.
struct Options {
  int64_t d_in = 896, expansion = 16, tokens = 2048, top_k = 64;
  int threads = 2, repeats = 5;
};

// The median of `repeats` timings of `run`, after one warm-up.
double MedianSeconds(int repeats, const std::function<void()>& run) {
  run();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) times.push_back(SecondsToRun(run));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string LoadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one;
  file >> one;
  return one;
}

// A random SAE of the bench's shape: `activation` relu with zero-mean weights and biases
// fires on about half the latents (the selection's worst case); topk keeps `top_k`.
SaeModel RandomSae(const Options& options, SaeActivation activation) {
  SaeModel sae;
  sae.dir = "(random)";
  sae.activation = activation;
  sae.d_in = options.d_in;
  sae.d_sae = options.d_in * options.expansion;
  sae.k = options.top_k;
  std::mt19937 rng(26);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  sae.encoder_weight.resize(static_cast<size_t>(sae.d_sae * sae.d_in));
  for (float& weight : sae.encoder_weight) weight = normal(rng);
  sae.encoder_bias.resize(static_cast<size_t>(sae.d_sae));
  for (float& bias : sae.encoder_bias) bias = normal(rng);
  sae.decoder_bias.resize(static_cast<size_t>(sae.d_in));
  for (float& bias : sae.decoder_bias) bias = normal(rng);
  return sae;
}

int Run(const Options& options) {
  const VectorIsa isa = ActiveIsa();
  const GemmBackend backend = PreferredGemmBackend(isa);
  const int64_t d_sae = options.d_in * options.expansion;
  std::printf("CPU %s, kernels %s, products by %s, %d threads, load average %s\n",
              CpuModelName().c_str(), IsaName(isa), GemmBackendName(backend), options.threads,
              LoadAverage().c_str());
  std::printf("SAE d_in %lld, d_sae %lld (%lldx), %lld tokens a batch, K %lld\n",
              static_cast<long long>(options.d_in), static_cast<long long>(d_sae),
              static_cast<long long>(options.expansion), static_cast<long long>(options.tokens),
              static_cast<long long>(options.top_k));
  SetBlasThreads(1);
  ThreadTeam team(options.threads);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(options.tokens * options.d_in));
  for (float& value : x) value = normal(rng);
  const double flops = 2.0 * options.tokens * options.d_in * d_sae;

  // The bare product, spread over the team as the encoder spreads it: blocks of tokens.
  const SaeModel relu = RandomSae(options, SaeActivation::kRelu);
  std::vector<float> product(static_cast<size_t>(options.tokens * d_sae));
  const int64_t block = SaeEncoder::kBlockTokens;
  const double sgemm_seconds = MedianSeconds(options.repeats, [&] {
    team.Run((options.tokens + block - 1) / block, [&](int64_t index, int) {
      const int64_t first = index * block, rows = std::min(block, options.tokens - first);
      GemmOnThisThread(backend, rows, d_sae, options.d_in, x.data() + first * options.d_in,
                       options.d_in, relu.encoder_weight.data(), options.d_in, 0.0f,
                       product.data() + first * d_sae, d_sae);
    });
  });
  const double sgemm_gflops = flops / sgemm_seconds / 1e9;
  std::printf("sgemm [%lld x %lld]·[%lld x %lld]: %.1f GFLOPS\n",
              static_cast<long long>(options.tokens), static_cast<long long>(options.d_in),
              static_cast<long long>(options.d_in), static_cast<long long>(d_sae), sgemm_gflops);
  // A forward's seconds per token if it ran at this sgemm rate (it runs at 0.85-1.0 of it).
  const double forward_seconds_per_token = kForwardFlopsPerToken / (sgemm_gflops * 1e9);

  std::printf("%-8s %12s %10s %9s %12s %14s\n", "SAE", "tokens/s", "GFLOPS", "x sgemm",
              "firing/tok", "x 0.5B forward");
  for (SaeActivation activation : {SaeActivation::kRelu, SaeActivation::kTopK}) {
    const SaeModel sae = RandomSae(options, activation);
    SaeEncoder encoder(sae, options.top_k, backend);
    SaeLatents latents;
    const double seconds = MedianSeconds(options.repeats, [&] {
      encoder.EncodeTopK(x.data(), options.d_in, options.tokens, &latents, &team);
    });
    double firing = 0;
    for (int32_t count : latents.counts) firing += count;
    const double seconds_per_token = seconds / options.tokens;
    std::printf("%-8s %12.0f %10.1f %9.3f %12.0f %13.2f%%\n", SaeActivationName(activation),
                options.tokens / seconds, flops / seconds / 1e9, sgemm_seconds / seconds,
                firing / options.tokens, 100.0 * seconds_per_token / forward_seconds_per_token);
  }

  // On disk per token: the dense site in bfloat16 against K ids (I32) + K values + a count.
  const double dense = 2.0 * options.d_in;
  const double latents_bf16 = options.top_k * (4.0 + 2.0) + 4.0;
  const double latents_f32 = options.top_k * (4.0 + 4.0) + 4.0;
  std::printf(
      "bytes per token: dense bf16 %.0f; latents (K %lld) with bf16 values %.0f (%.2fx), "
      "with float32 values %.0f (%.2fx)\n",
      dense, static_cast<long long>(options.top_k), latents_bf16, dense / latents_bf16, latents_f32,
      dense / latents_f32);
  return 0;
}

}  // namespace
}  // namespace actex

int main(int argc, char** argv) {
  actex::Options options;
  CLI::App app{"SAE encoding throughput against the same run's sgemm (bench/README.md)"};
  app.add_option("--d-in", options.d_in, "site width (896: Qwen2.5-0.5B's residual stream)");
  app.add_option("--expansion", options.expansion, "d_sae / d_in");
  app.add_option("--tokens", options.tokens, "tokens encoded per call (a batch)");
  app.add_option("--top-k", options.top_k, "latents kept per token");
  app.add_option("--threads", options.threads, "ThreadTeam members");
  app.add_option("--repeats", options.repeats, "timed calls per figure (the median is shown)");
  CLI11_PARSE(app, argc, argv);
  return actex::Run(options);
}
