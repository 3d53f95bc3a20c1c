#include "model/kernels/routing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace actex {
namespace {

// softmax over all experts in double, for the expected weights.
std::vector<double> Softmax(const std::vector<float>& logits) {
  std::vector<double> p;
  double sum = 0.0;
  for (float logit : logits) sum += std::exp(double{logit});
  for (float logit : logits) p.push_back(std::exp(double{logit}) / sum);
  return p;
}

TEST(RouteTopK, TakesTheLargestProbabilitiesInDescendingOrder) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.5f, 0.0f};  // one token
  std::vector<float> probabilities(5), weights(2);
  std::vector<int32_t> ids(2);
  RouteTopK(logits.data(), 1, 5, 2, /*renormalize=*/false, probabilities.data(), ids.data(),
            weights.data());
  const std::vector<double> p = Softmax(logits);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 3}));
  EXPECT_NEAR(weights[0], p[1], 1e-7);  // the softmax over all five, not over the two
  EXPECT_NEAR(weights[1], p[3], 1e-7);
  for (int e = 0; e < 5; ++e) EXPECT_NEAR(probabilities[e], p[e], 1e-7);
}

TEST(RouteTopK, RenormalisesTheChosenWeightsToSumOne) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.5f, 0.0f, 3.0f, -2.0f, 1.0f};  // 2 tokens
  std::vector<float> probabilities(8), weights(4);
  std::vector<int32_t> ids(4);
  RouteTopK(logits.data(), 2, 4, 2, /*renormalize=*/true, probabilities.data(), ids.data(),
            weights.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 3, 1, 3}));
  // Renormalised top-k of a softmax is the softmax of the chosen logits.
  EXPECT_NEAR(weights[0], 1.0 / (1.0 + std::exp(-0.5)), 1e-7);
  EXPECT_NEAR(weights[2], 1.0 / (1.0 + std::exp(-2.0)), 1e-7);
  EXPECT_NEAR(weights[0] + weights[1], 1.0f, 1e-7);
  EXPECT_NEAR(weights[2] + weights[3], 1.0f, 1e-7);
}

TEST(RouteTopK, BreaksTiesTowardTheLowerExpert) {
  const std::vector<float> logits = {1.0f, 2.0f, 2.0f, 2.0f};
  std::vector<float> probabilities(4), weights(3);
  std::vector<int32_t> ids(3);
  RouteTopK(logits.data(), 1, 4, 3, false, probabilities.data(), ids.data(), weights.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, 3}));
}

}  // namespace
}  // namespace actex
