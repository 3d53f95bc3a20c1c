#include "model/kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace actex {
namespace {

// Causal attention in double for query head `head` reading kv head `kv`.
std::vector<double> ReferenceAttention(const std::vector<float>& q, const std::vector<float>& k,
                                       const std::vector<float>& v, int64_t ld_q, int64_t ld_kv,
                                       int64_t tokens, int local_head, int local_kv, int dim) {
  std::vector<double> out(tokens * dim);
  for (int64_t i = 0; i < tokens; ++i) {
    std::vector<double> scores(i + 1);
    double maximum = -INFINITY;
    for (int64_t j = 0; j <= i; ++j) {
      double dot = 0.0;
      for (int d = 0; d < dim; ++d) {
        dot += double{q[i * ld_q + local_head * dim + d]} * k[j * ld_kv + local_kv * dim + d];
      }
      scores[j] = dot / std::sqrt(static_cast<double>(dim));
      maximum = std::max(maximum, scores[j]);
    }
    double sum = 0.0;
    for (double& score : scores) sum += (score = std::exp(score - maximum));
    for (int64_t j = 0; j <= i; ++j) {
      for (int d = 0; d < dim; ++d) {
        out[i * dim + d] += scores[j] / sum * v[j * ld_kv + local_kv * dim + d];
      }
    }
  }
  return out;
}

TEST(CausalAttention, MatchesDoubleWithGroupedHeadsAcrossQueryBlocks) {
  // A shard holding query heads 3..5 of a model with group 2: kv heads 1..2.
  const AttentionHeads heads{
      .first_head = 3, .heads = 3, .first_kv_head = 1, .kv_heads = 2, .group = 2, .head_dim = 16};
  const int64_t tokens = 300;  // more than one block of queries
  const int64_t ld_q = heads.heads * heads.head_dim, ld_kv = heads.kv_heads * heads.head_dim;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  std::vector<float> q(tokens * ld_q), k(tokens * ld_kv), v(tokens * ld_kv);
  for (auto* buffer : {&q, &k, &v}) {
    for (float& value : *buffer) value = normal(rng);
  }
  std::vector<float> context(tokens * ld_q, NAN), scratch;
  CausalAttention(q.data(), k.data(), v.data(), ld_q, ld_kv, tokens, heads, context.data(),
                  &scratch);
  for (int local = 0; local < heads.heads; ++local) {
    const int local_kv = (heads.first_head + local) / heads.group - heads.first_kv_head;
    const auto expected = ReferenceAttention(q, k, v, ld_q, ld_kv, tokens, local, local_kv, 16);
    double worst = 0.0;
    for (int64_t t = 0; t < tokens; ++t) {
      for (int d = 0; d < 16; ++d) {
        worst =
            std::max(worst, std::fabs(expected[t * 16 + d] - context[t * ld_q + local * 16 + d]));
      }
    }
    EXPECT_LT(worst, 2e-5) << "local head " << local;
  }
}

TEST(CausalAttention, MatchesDoubleForEveryHeadWidthAndLength) {
  // Head widths that fill the 16-lane chunks exactly (64) and leave a tail (24, 72);
  // lengths that do and do not fill the four-query and sixteen-key tiles.
  for (int dim : {24, 64, 72}) {
    for (int64_t tokens : {1, 3, 4, 17, 130}) {
      const AttentionHeads heads{.first_head = 0,
                                 .heads = 2,
                                 .first_kv_head = 0,
                                 .kv_heads = 1,
                                 .group = 2,
                                 .head_dim = dim};
      const int64_t ld_q = 2 * dim + 5, ld_kv = dim + 3;  // strided rows
      std::mt19937 rng(static_cast<uint32_t>(dim * 1000 + tokens));
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::vector<float> q(tokens * ld_q), k(tokens * ld_kv), v(tokens * ld_kv);
      for (auto* buffer : {&q, &k, &v}) {
        for (float& value : *buffer) value = normal(rng);
      }
      std::vector<float> context(tokens * ld_q, 123.0f), scratch;
      CausalAttention(q.data(), k.data(), v.data(), ld_q, ld_kv, tokens, heads, context.data(),
                      &scratch);
      for (int local = 0; local < 2; ++local) {
        const auto expected = ReferenceAttention(q, k, v, ld_q, ld_kv, tokens, local, 0, dim);
        double worst = 0.0;
        for (int64_t t = 0; t < tokens; ++t) {
          for (int d = 0; d < dim; ++d) {
            worst = std::max(
                worst, std::fabs(expected[t * dim + d] - context[t * ld_q + local * dim + d]));
          }
        }
        EXPECT_LT(worst, 2e-5) << "dim " << dim << ", tokens " << tokens << ", head " << local;
      }
      for (int64_t t = 0; t < tokens; ++t) {  // the row padding is left alone
        for (int64_t c = 2 * dim; c < ld_q; ++c) ASSERT_EQ(context[t * ld_q + c], 123.0f);
      }
    }
  }
}

TEST(CausalAttention, FirstTokenSeesOnlyItself) {
  const AttentionHeads heads{
      .first_head = 0, .heads = 1, .first_kv_head = 0, .kv_heads = 1, .group = 1, .head_dim = 4};
  const std::vector<float> q = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> k = {1, 0, 0, 0, 0, 1, 0, 0};
  const std::vector<float> v = {10, 20, 30, 40, -1, -2, -3, -4};
  std::vector<float> context(8), scratch;
  CausalAttention(q.data(), k.data(), v.data(), 4, 4, 2, heads, context.data(), &scratch);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(context[d], v[d]);
}

}  // namespace
}  // namespace actex
