// The forward pass's kernels at Qwen2.5-0.5B shapes (hidden 896, intermediate 4864,
// 14 query heads and 2 key/value heads of 64), one 2048-token batch of eight
// 256-token documents. Matrix products report FLOP/s (2·M·N·K per product; causal
// attention counts only the keys each query sees); the element-wise kernels report
// bytes/s (every float read and written once). Every benchmark takes the number of
// BLAS threads as its last argument, so the 1- and 2-thread figures sit side by side.

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "model/blas_threads.h"
#include "model/kernels/attention.h"
#include "model/kernels/bf16_gemm.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"
#include "model/kernels/half_float.h"
#include "model/kernels/linear.h"
#include "model/kernels/linear_products.h"
#include "model/kernels/rms_norm.h"
#include "model/kernels/rotary.h"
#include "model/kernels/swiglu.h"
#include "model/kernels/thread_team.h"
#include "model/precision.h"

namespace actex {
namespace {

constexpr int64_t kTokens = 2048;
constexpr int64_t kHidden = 896;
constexpr int64_t kIntermediate = 4864;
constexpr int kHeads = 14, kKvHeads = 2, kHeadDim = 64;
constexpr int64_t kPositionsPerDocument = 256;

std::vector<float> RandomFloats(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = uniform(rng);
  return values;
}

// A [rows, cols] weight in `dtype`, as it would lie in a mapped safetensors file.
std::vector<uint8_t> RandomWeight(int64_t rows, int64_t cols, WeightDtype dtype) {
  const std::vector<float> values = RandomFloats(rows * cols, 11);
  const int bytes = WeightDtypeBytes(dtype);
  std::vector<uint8_t> storage(static_cast<size_t>(rows * cols * bytes));
  for (int64_t i = 0; i < rows * cols; ++i) {
    if (dtype == WeightDtype::kF32) {
      std::memcpy(storage.data() + i * 4, &values[i], 4);
    } else {
      const uint16_t half =
          dtype == WeightDtype::kBF16 ? FloatToBfloat16Bits(values[i]) : FloatToFloat16(values[i]);
      std::memcpy(storage.data() + i * 2, &half, 2);
    }
  }
  return storage;
}

const char* DtypeName(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::kF32:
      return "F32";
    case WeightDtype::kBF16:
      return "BF16";
    case WeightDtype::kF16:
      return "F16";
  }
  return "?";
}

benchmark::Counter Rate(double per_iteration) {
  return benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate,
                            benchmark::Counter::kIs1000);
}

// Bare OpenBLAS: Y[tokens, out] = X[tokens, in] · Wᵀ with float32 W, the ceiling the
// Linear figures are compared with.
void BM_Sgemm(benchmark::State& state) {
  const int64_t in = state.range(0), out = state.range(1);
  SetBlasThreads(static_cast<int>(state.range(2)));
  const std::vector<float> x = RandomFloats(kTokens * in, 1), w = RandomFloats(out * in, 2);
  std::vector<float> y(static_cast<size_t>(kTokens * out));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kTokens, out, in, 1.0f, x.data(), in,
                w.data(), in, 0.0f, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOPS"] = Rate(2.0 * kTokens * in * out);
}

// The same product split in two halves of the output features, each computed by its
// own thread with a 1-thread call of the backend (0 OpenBLAS, 1 oneDNN): what the
// forward pass does on a team of two, against BM_Sgemm's one product on two BLAS threads.
void BM_GemmHalvesOnTwoThreads(benchmark::State& state) {
  const int64_t in = state.range(0), out = state.range(1), half = out / 2;
  const GemmBackend backend = state.range(2) ? GemmBackend::kOneDnn : GemmBackend::kOpenBlas;
  SetBlasThreads(1);
  const std::vector<float> x = RandomFloats(kTokens * in, 1), w = RandomFloats(out * in, 2);
  std::vector<float> y(static_cast<size_t>(kTokens * out));
  auto product = [&](int64_t first, int64_t count) {
    GemmOnThisThread(backend, kTokens, count, in, x.data(), in, w.data() + first * in, in, 0.0f,
                     y.data() + first, out);
  };
  for (auto _ : state) {
    std::thread other([&] { product(half, out - half); });
    product(0, half);
    other.join();
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOPS"] = Rate(2.0 * kTokens * in * out);
}

// The gemm wrapper on F32 (in place), BF16 and F16 (widened tile by tile) weights, as
// the forward pass calls it: a ThreadTeam of `threads`, each member a 1-thread sgemm.
// precision 1: bfloat16 products (--precision bf16, LinearProducts): X rounded on the
// team, one 1-thread oneDNN bf16 matmul per member's share, BF16 weights in place, F32
// and F16 rounded tile by tile.
void BM_Linear(benchmark::State& state) {
  const int64_t in = state.range(0), out = state.range(1);
  const auto dtype = static_cast<WeightDtype>(state.range(2));
  ThreadTeam team(static_cast<int>(state.range(3)));
  const Precision precision = state.range(4) == 0 ? Precision::kFp32 : Precision::kBf16;
  if (precision == Precision::kBf16) {
    if (auto supported = Bf16ProductsSupported(); !supported) {
      state.SkipWithError(supported.error().c_str());
      return;
    }
  }
  SetBlasThreads(1);
  const std::vector<uint8_t> storage = RandomWeight(out, in, dtype);
  const WeightView view{storage.data(), dtype, out, in};
  const std::vector<float> x = RandomFloats(kTokens * in, 1);
  std::vector<float> y(static_cast<size_t>(kTokens * out));
  LinearProducts products(precision);
  for (auto _ : state) {
    products.Linear(x.data(), in, kTokens, RowSlice(view, 0, out), nullptr, y.data(), out, &team);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOPS"] = Rate(2.0 * kTokens * in * out);
  state.SetLabel(std::string(DtypeName(dtype)) + " weights, " + PrecisionName(precision) +
                 " products");
}

// What a bf16 matmul primitive costs to make (Bf16Gemm keeps one per shape): a fresh
// Bf16Gemm's first product of [tokens, in] x [in, out], against the same product again
// (BM_Bf16GemmCreation/made:0).
void BM_Bf16GemmCreation(benchmark::State& state) {
  if (auto supported = Bf16ProductsSupported(); !supported) {
    state.SkipWithError(supported.error().c_str());
    return;
  }
  const int64_t tokens = state.range(0), in = kHidden, out = kIntermediate;
  const std::vector<uint16_t> x(static_cast<size_t>(tokens * in), FloatToBfloat16Bits(0.5f));
  const std::vector<uint16_t> w(static_cast<size_t>(out * in), FloatToBfloat16Bits(0.25f));
  std::vector<float> y(static_cast<size_t>(tokens * out));
  Bf16Gemm kept;
  for (auto _ : state) {
    if (state.range(1) != 0) {
      Bf16Gemm fresh;
      fresh.Multiply(tokens, out, in, x.data(), in, w.data(), in, 0.0f, y.data(), out);
    } else {
      kept.Multiply(tokens, out, in, x.data(), in, w.data(), in, 0.0f, y.data(), out);
    }
    benchmark::DoNotOptimize(y.data());
  }
}

// Causal GQA attention over one packed batch of documents of `length` tokens, one
// task per (document, head) spread over a ThreadTeam of `threads`, as the forward
// pass runs it.
void BM_CausalAttention(benchmark::State& state) {
  const int64_t length = state.range(0);
  ThreadTeam team(static_cast<int>(state.range(1)));
  const int64_t ld_q = kHeads * kHeadDim, ld_kv = kKvHeads * kHeadDim;
  const std::vector<float> q = RandomFloats(kTokens * ld_q, 1),
                           k = RandomFloats(kTokens * ld_kv, 2),
                           v = RandomFloats(kTokens * ld_kv, 3);
  std::vector<float> context(static_cast<size_t>(kTokens * ld_q));
  std::vector<std::vector<float>> scratch(static_cast<size_t>(team.size()));
  const int64_t documents = kTokens / length;
  for (auto _ : state) {
    team.Run(documents * kHeads, [&](int64_t task, int member) {
      const int64_t first = task / kHeads * length;
      const int head = static_cast<int>(task % kHeads);
      const AttentionHeads one_head{.first_head = head,
                                    .heads = 1,
                                    .first_kv_head = 0,
                                    .kv_heads = kKvHeads,
                                    .group = kHeads / kKvHeads,
                                    .head_dim = kHeadDim};
      CausalAttention(q.data() + first * ld_q + head * kHeadDim, k.data() + first * ld_kv,
                      v.data() + first * ld_kv, ld_q, ld_kv, length, one_head,
                      context.data() + first * ld_q + head * kHeadDim, &scratch[member]);
    });
    benchmark::DoNotOptimize(context.data());
  }
  // Q·Kᵀ and P·V: 2·dim FLOPs each per visible (query, key) pair and head.
  const double pairs = documents * (length * (length + 1) / 2.0);
  state.counters["FLOPS"] = Rate(4.0 * kHeads * kHeadDim * pairs);
}

void BM_RmsNorm(benchmark::State& state) {
  const std::vector<float> x = RandomFloats(kTokens * kHidden, 1),
                           weight = RandomFloats(kHidden, 2);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    RmsNorm(x.data(), kTokens, kHidden, weight.data(), 1e-6f, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["bytes/s"] = Rate(2.0 * sizeof(float) * kTokens * kHidden);
}

void BM_Rotary(benchmark::State& state) {
  std::vector<float> rows = RandomFloats(kTokens * kHidden, 1);
  std::vector<int32_t> positions(kTokens);
  for (int64_t t = 0; t < kTokens; ++t)
    positions[t] = static_cast<int32_t>(t % kPositionsPerDocument);
  RotaryTable table(kHeadDim, 1000000.0f);
  table.Reserve(kPositionsPerDocument);
  for (auto _ : state) {
    ApplyRotary(rows.data(), kTokens, kHidden, kHeads, kHeadDim, positions.data(), table);
    benchmark::DoNotOptimize(rows.data());
  }
  state.counters["bytes/s"] = Rate(2.0 * sizeof(float) * kTokens * kHidden);
}

void BM_SwiGlu(benchmark::State& state) {
  const std::vector<float> gate = RandomFloats(kTokens * kIntermediate, 1),
                           up = RandomFloats(kTokens * kIntermediate, 2);
  std::vector<float> out(gate.size());
  for (auto _ : state) {
    SwiGlu(gate.data(), up.data(), kTokens * kIntermediate, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes/s"] = Rate(3.0 * sizeof(float) * kTokens * kIntermediate);
}

// 16-bit to float32 widening of one gate/up weight (bytes/s counts the float32 output).
void BM_Widen(benchmark::State& state) {
  const auto dtype = static_cast<WeightDtype>(state.range(0));
  const std::vector<uint8_t> storage = RandomWeight(kIntermediate, kHidden, dtype);
  std::vector<float> out(static_cast<size_t>(kIntermediate * kHidden));
  for (auto _ : state) {
    WidenToFloat(storage.data(), dtype, kIntermediate * kHidden, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes/s"] = Rate(sizeof(float) * kIntermediate * kHidden);
  state.SetLabel(DtypeName(dtype));
}

constexpr int64_t kF32 = static_cast<int64_t>(WeightDtype::kF32);
constexpr int64_t kBF16 = static_cast<int64_t>(WeightDtype::kBF16);
constexpr int64_t kF16 = static_cast<int64_t>(WeightDtype::kF16);

// [in, out] of q_proj, k_proj (= v_proj), gate_proj (= up_proj) and down_proj.
void ProjectionShapes(benchmark::internal::Benchmark* benchmark, bool with_dtype) {
  for (auto [in, out] : {std::pair<int64_t, int64_t>{kHidden, kHidden},
                         {kHidden, kKvHeads * kHeadDim},
                         {kHidden, kIntermediate},
                         {kIntermediate, kHidden}}) {
    for (int64_t threads : {1, 2}) {
      if (!with_dtype) {
        benchmark->Args({in, out, threads});
        continue;
      }
      for (int64_t dtype : {kF32, kBF16, kF16}) {
        for (int64_t precision : {0, 1}) benchmark->Args({in, out, dtype, threads, precision});
      }
    }
  }
}

BENCHMARK(BM_Sgemm)
    ->ArgNames({"in", "out", "threads"})
    ->Apply([](auto* b) { ProjectionShapes(b, false); }) -> UseRealTime()
        -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmHalvesOnTwoThreads)
    ->ArgNames({"in", "out", "onednn"})
    ->ArgsProduct({{kHidden}, {kIntermediate}, {0, 1}})
    ->ArgsProduct({{kIntermediate}, {kHidden}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Linear)
    ->ArgNames({"in", "out", "dtype", "threads", "precision"})
    ->Apply([](auto* b) { ProjectionShapes(b, true); }) -> UseRealTime()
        -> Unit(benchmark::kMillisecond);
// A 7B model's MLP (Mistral 7B, Llama 3.1 8B: hidden 4096, intermediate 14336), where
// 16-bit weights are widened in 512-column tiles, against float32 read in place.
BENCHMARK(BM_Linear)
    ->Name("BM_Linear7B")
    ->ArgNames({"in", "out", "dtype", "threads", "precision"})
    ->ArgsProduct({{4096}, {14336}, {kF32, kBF16}, {2}, {0, 1}})
    ->ArgsProduct({{14336}, {4096}, {kF32, kBF16}, {2}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bf16GemmCreation)
    ->ArgNames({"tokens", "made"})
    ->ArgsProduct({{1, 2048}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CausalAttention)
    ->ArgNames({"length", "threads"})
    ->ArgsProduct({{kPositionsPerDocument, 2048}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RmsNorm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Rotary)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SwiGlu)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Widen)->ArgNames({"dtype"})->Arg(kBF16)->Arg(kF16)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace actex

BENCHMARK_MAIN();
