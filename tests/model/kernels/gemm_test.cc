#include "model/kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "model/blas_threads.h"

namespace actex {
namespace {

// Y = X · Wᵀ (+ Y) in double against GemmOnThisThread, over strided rows and shapes
// that fill no kernel's register tile evenly.
void CheckGemm(GemmBackend backend, int64_t m, int64_t n, int64_t k, float beta) {
  const int64_t ldx = k + 3, ldw = k + 5, ldy = n + 2;
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + n * 7 + k));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(m * ldx), w(n * ldw), y(m * ldy);
  for (float& value : x) value = uniform(rng);
  for (float& value : w) value = uniform(rng);
  for (float& value : y) value = uniform(rng);
  const std::vector<float> before = y;
  SetBlasThreads(1);
  GemmOnThisThread(backend, m, n, k, x.data(), ldx, w.data(), ldw, beta, y.data(), ldy);
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double expected = beta != 0 ? before[i * ldy + j] : 0.0;
      for (int64_t p = 0; p < k; ++p) expected += double{x[i * ldx + p]} * w[j * ldw + p];
      worst = std::max(worst, std::abs(expected - y[i * ldy + j]));
    }
    // The padding between rows is never written.
    for (int64_t j = n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], before[i * ldy + j]);
  }
  // float32 products of k terms of magnitude < 1: a few ulp of sqrt(k)-sized sums.
  EXPECT_LT(worst, 1e-6 * k) << GemmBackendName(backend) << " " << m << "x" << n << "x" << k;
}

class GemmBackends : public ::testing::TestWithParam<GemmBackend> {};

TEST_P(GemmBackends, MatchesDoublePrecisionOverwritingOrAccumulating) {
  for (float beta : {0.0f, 1.0f}) {
    CheckGemm(GetParam(), 1, 1, 1, beta);
    CheckGemm(GetParam(), 7, 33, 65, beta);
    CheckGemm(GetParam(), 130, 97, 512, beta);
    CheckGemm(GetParam(), 64, 300, 17, beta);
  }
}

TEST_P(GemmBackends, RepeatsBitForBit) {
  const int64_t m = 96, n = 80, k = 200;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(m * k), w(n * k), first(m * n), second(m * n);
  for (float& value : x) value = uniform(rng);
  for (float& value : w) value = uniform(rng);
  SetBlasThreads(1);
  GemmOnThisThread(GetParam(), m, n, k, x.data(), k, w.data(), k, 0.0f, first.data(), n);
  GemmOnThisThread(GetParam(), m, n, k, x.data(), k, w.data(), k, 0.0f, second.data(), n);
  EXPECT_EQ(first, second);
}

INSTANTIATE_TEST_SUITE_P(Backends, GemmBackends,
                         ::testing::Values(GemmBackend::kOpenBlas, GemmBackend::kOneDnn),
                         [](const auto& info) { return std::string(GemmBackendName(info.param)); });

TEST(PreferredGemmBackend, IsOneDnnOnAvx512AndOpenBlasOnAvx2) {
  EXPECT_EQ(PreferredGemmBackend(VectorIsa::kAvx512), GemmBackend::kOneDnn);
  EXPECT_EQ(PreferredGemmBackend(VectorIsa::kAvx2), GemmBackend::kOpenBlas);
}

}  // namespace
}  // namespace actex
