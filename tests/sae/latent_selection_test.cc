// One token's latents from its pre-activations: order, ties, padding and counts.

#include "sae/latent_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace actex {
namespace {

// An SAE of `d_sae` latents with a zero encoder bias, enough for SelectTopLatents.
SaeModel SaeOfWidth(int64_t d_sae, SaeActivation activation) {
  SaeModel sae;
  sae.d_in = 1;
  sae.d_sae = d_sae;
  sae.activation = activation;
  sae.encoder_bias.assign(static_cast<size_t>(d_sae), 0.0f);
  return sae;
}

struct Selected {
  std::vector<int32_t> ids;
  std::vector<float> values;
  int32_t count;
};

// SelectTopLatents on a copy of `product` (it overwrites the row with the activations).
Selected Select(const SaeModel& sae, std::vector<float> product, int64_t top_k) {
  Selected selected{std::vector<int32_t>(top_k), std::vector<float>(top_k), 0};
  std::vector<LatentCandidate> scratch;
  selected.count = SelectTopLatents(sae, product.data(), top_k, selected.ids.data(),
                                    selected.values.data(), &scratch);
  return selected;
}

TEST(SelectTopLatents, KeepsTheLargestInDescendingOrderTiesBySmallerIdAndCountsAllFiring) {
  const SaeModel sae = SaeOfWidth(6, SaeActivation::kRelu);
  const Selected selected = Select(sae, {0.5f, -1.0f, 2.0f, 0.5f, 0.0f, 0.25f}, 3);
  EXPECT_EQ(selected.ids, (std::vector<int32_t>{2, 0, 3}));
  EXPECT_EQ(selected.values, (std::vector<float>{2.0f, 0.5f, 0.5f}));
  EXPECT_EQ(selected.count, 4);  // 0.25 fires but is cut; 0 and -1 do not fire
}

TEST(SelectTopLatents, PadsWithNoLatentWhereFewerFire) {
  const SaeModel sae = SaeOfWidth(4, SaeActivation::kRelu);
  const Selected selected = Select(sae, {-0.5f, 1.5f, -2.0f, 0.0f}, 3);
  EXPECT_EQ(selected.ids, (std::vector<int32_t>{1, kNoLatent, kNoLatent}));
  EXPECT_EQ(selected.values, (std::vector<float>{1.5f, 0.0f, 0.0f}));
  EXPECT_EQ(selected.count, 1);
}

TEST(SelectTopLatents, AddsTheEncoderBiasAndAppliesJumpReluThresholds) {
  SaeModel sae = SaeOfWidth(3, SaeActivation::kJumpRelu);
  sae.encoder_bias = {1.0f, 0.0f, 0.0f};
  sae.threshold = {1.5f, 0.5f, 0.1f};
  const Selected selected = Select(sae, {0.25f, 0.5f, 0.2f}, 3);
  // 1.25 ≤ 1.5 and 0.5 ≤ 0.5 stay zero; 0.2 > 0.1 fires.
  EXPECT_EQ(selected.ids, (std::vector<int32_t>{2, kNoLatent, kNoLatent}));
  EXPECT_EQ(selected.count, 1);
}

TEST(SelectTopLatents, ATopKSaeCountsAtMostItsK) {
  SaeModel sae = SaeOfWidth(5, SaeActivation::kTopK);
  sae.k = 2;
  const Selected selected = Select(sae, {0.1f, 0.4f, 0.3f, 0.2f, -1.0f}, 2);
  EXPECT_EQ(selected.ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(selected.count, 2);
}

TEST(SelectTopLatents, ScalesPreActivationsAfterTheBias) {
  SaeModel sae = SaeOfWidth(2, SaeActivation::kTopK);
  sae.k = 2;
  sae.encoder_bias = {1.0f, 0.0f};
  sae.latent_scale = {0.5f, 3.0f};
  const Selected selected = Select(sae, {1.0f, 1.0f}, 2);
  EXPECT_EQ(selected.ids, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(selected.values, (std::vector<float>{3.0f, 1.0f}));
}

TEST(SelectTopLatents, AWideRowAgreesWithSortingEveryFiringLatent) {
  // Wide enough for the vector lanes and a tail, with repeated values so ties are cut.
  constexpr int64_t kWidth = 1003;
  SaeModel sae = SaeOfWidth(kWidth, SaeActivation::kRelu);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> level(-40, 60);
  std::vector<float> product(kWidth);
  for (float& value : product) value = static_cast<float>(level(rng)) / 8.0f;
  for (int64_t top_k : {1, 17, 64, 600}) {
    std::vector<std::pair<float, int32_t>> firing;
    for (int32_t i = 0; i < kWidth; ++i) {
      if (product[i] > 0.0f) firing.push_back({-product[i], i});
    }
    std::sort(firing.begin(), firing.end());
    const Selected selected = Select(sae, product, top_k);
    EXPECT_EQ(selected.count, static_cast<int32_t>(firing.size()));
    for (int64_t j = 0; j < top_k; ++j) {
      const bool kept = j < static_cast<int64_t>(firing.size());
      EXPECT_EQ(selected.ids[j], kept ? firing[j].second : kNoLatent)
          << "top_k " << top_k << " " << j;
      EXPECT_EQ(selected.values[j], kept ? -firing[j].first : 0.0f);
    }
  }
}

}  // namespace
}  // namespace actex
