#include "bench/fma_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace actex {
namespace {

// Twelve chains: at 4 cycles of latency and two FMA pipes a core needs eight in
// flight; twelve leave room for newer cores without spilling registers.
constexpr int kChains = 12;

float ChainsAvx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 scale = _mm256_set1_ps(0.999f), shift = _mm256_set1_ps(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, shift);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  return _mm256_cvtss_f32(sum);  // keeps the chains alive
}

__attribute__((target("avx512f"))) float ChainsAvx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 scale = _mm512_set1_ps(0.999f), shift = _mm512_set1_ps(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_cvtss_f32(sum);
}

// Wall seconds for every thread to run `iterations` rounds of the chains.
double TimeChains(VectorIsa isa, int threads, int64_t iterations) {
  std::vector<float> sinks(static_cast<size_t>(threads));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      sinks[static_cast<size_t>(t)] =
          isa == VectorIsa::kAvx512 ? ChainsAvx512(iterations) : ChainsAvx2(iterations);
    });
  }
  for (std::thread& worker : workers) worker.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double MeasureFmaPeakGflops(VectorIsa isa, int threads, double seconds) {
  const int lanes = isa == VectorIsa::kAvx512 ? 16 : 8;
  // Calibrate on a short run, then time one of about `seconds`; the best of three
  // runs is the peak (noise only ever slows a run down).
  int64_t iterations = 1 << 20;
  const double calibration = TimeChains(isa, threads, iterations);
  iterations = static_cast<int64_t>(iterations * seconds / std::max(calibration, 1e-6));
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const double elapsed = TimeChains(isa, threads, iterations);
    const double flops = 2.0 * lanes * kChains * static_cast<double>(iterations) * threads;
    best = std::max(best, flops / elapsed / 1e9);
  }
  return best;
}

}  // namespace actex
