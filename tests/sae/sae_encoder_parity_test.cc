// Encodings against the libraries' own (tests/fixtures/sae, make_sae_fixtures.py): SAELens's
// SAE.encode (dense [tokens, d_sae]) and sparsify's SparseCoder.encode (top_acts and
// top_indices), of the same 256 rows of float32 activations.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/blas_threads.h"
#include "model/kernels/thread_team.h"
#include "sae/sae_encoder.h"
#include "sae/sae_loader.h"
#include "storage/safetensors.h"
#include "tests/sae/sae_fixtures.h"

namespace actex {
namespace {

constexpr int64_t kTokens = 256, kDIn = 64, kDSae = 256;

// Tensor `name` of fixture file `file` as values of type T (its dtype's width).
template <typename T>
std::vector<T> FixtureTensor(const std::string& file, const std::string& name) {
  auto opened = SafetensorsFile::Open(SaeFixture(file));
  EXPECT_TRUE(opened) << opened.error();
  if (!opened) return {};
  const SafetensorsTensor& tensor = (*opened)->tensors().at(name);
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

std::vector<float> Activations() { return FixtureTensor<float>("activations.safetensors", "x"); }

// Sparsify's top_acts at top_indices, scattered into a dense [tokens, d_sae] row each.
std::vector<float> SparsifyDense() {
  const std::string file = "expected/sparsify-layers.1.safetensors";
  const std::vector<float> acts = FixtureTensor<float>(file, "top_acts");
  const std::vector<int64_t> indices = FixtureTensor<int64_t>(file, "top_indices");
  std::vector<float> dense(kTokens * kDSae, 0.0f);
  const int64_t k = static_cast<int64_t>(acts.size()) / kTokens;
  for (int64_t t = 0; t < kTokens; ++t) {
    for (int64_t j = 0; j < k; ++j) dense[t * kDSae + indices[t * k + j]] = acts[t * k + j];
  }
  return dense;
}

// Whether `a` and `b` agree within `relative` of `scale`: the token's largest activation.
// An activation is a sum of d_in products whose sizes go with the token's, so a small
// one is the difference of large terms and carries their rounding (2e-7 of a token's
// largest, between OpenBLAS and torch), not a rounding of its own size.
bool Within(float a, float b, float relative, float scale) {
  return std::fabs(a - b) <= relative * std::max(std::fabs(b), scale);
}

// `latents` against the library's dense encoding [tokens, d_sae]: per token the count of
// non-zero latents, then the K largest in descending order — values within 1e-5
// relative, ids identical except where two values tie within 1e-6 (both relative to the
// token's largest activation, see Within) — and kNoLatent padding past the count.
void ExpectLatentsMatch(const SaeLatents& latents, const std::vector<float>& dense) {
  ASSERT_EQ(latents.tokens, kTokens);
  int mismatches = 0;
  for (int64_t t = 0; t < kTokens && mismatches < 5; ++t) {
    const float* row = dense.data() + t * kDSae;
    std::vector<int32_t> order;
    for (int32_t i = 0; i < kDSae; ++i) {
      if (row[i] != 0.0f) order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    EXPECT_EQ(latents.counts[t], static_cast<int32_t>(order.size())) << "token " << t;
    const float scale = order.empty() ? 0.0f : row[order.front()];
    const int64_t kept = std::min<int64_t>(latents.k, static_cast<int64_t>(order.size()));
    for (int64_t j = 0; j < latents.k; ++j) {
      const int32_t id = latents.ids[t * latents.k + j];
      const float value = latents.values[t * latents.k + j];
      if (j >= kept) {
        EXPECT_EQ(id, kNoLatent) << "token " << t << " position " << j;
        EXPECT_EQ(value, 0.0f);
        continue;
      }
      const float expected = row[order[j]];
      EXPECT_TRUE(Within(value, expected, 1e-5f, scale))
          << "token " << t << " position " << j << ": " << value << " vs " << expected;
      const bool tie = id >= 0 && Within(row[id], expected, 1e-6f, scale);
      if (id != order[j] && !tie) {
        ADD_FAILURE() << "token " << t << " position " << j << ": latent " << id << " vs "
                      << order[j] << " (" << expected << ")";
        ++mismatches;
      }
    }
  }
}

SaeLatents Encode(const std::string& name, int64_t top_k, ThreadTeam* team = nullptr) {
  auto sae = LoadSae(SaeFixture(name));
  EXPECT_TRUE(sae) << sae.error();
  SaeLatents latents;
  if (!sae) return latents;
  SaeEncoder encoder(*sae, top_k);
  const std::vector<float> x = Activations();
  encoder.EncodeTopK(x.data(), kDIn, kTokens, &latents, team);
  return latents;
}

std::vector<float> SaeLensDense(const std::string& name) {
  return FixtureTensor<float>("expected/" + name + ".safetensors", "feature_acts");
}

TEST(SaeEncoderParity, SaeLensStandardCutToKAndCountingEveryFiringLatent) {
  const SaeLatents latents = Encode("saelens-standard", 64);
  EXPECT_EQ(latents.k, 64);
  // More than 64 latents fire on every token of the fixture, so the cut is exercised.
  EXPECT_GT(*std::min_element(latents.counts.begin(), latents.counts.end()), 64);
  ExpectLatentsMatch(latents, SaeLensDense("saelens-standard"));
}

TEST(SaeEncoderParity, SaeLensStandardWithKAboveTheLatentCountIsPadded) {
  ExpectLatentsMatch(Encode("saelens-standard", 300), SaeLensDense("saelens-standard"));
}

TEST(SaeEncoderParity, SaeLensJumpRelu) {
  ExpectLatentsMatch(Encode("saelens-jumprelu", 200), SaeLensDense("saelens-jumprelu"));
  ExpectLatentsMatch(Encode("saelens-jumprelu", 32), SaeLensDense("saelens-jumprelu"));
}

TEST(SaeEncoderParity, SaeLensTopKKeepsItsOwnK) {
  const SaeLatents latents = Encode("saelens-topk", 64);
  EXPECT_EQ(latents.k, 16);
  ExpectLatentsMatch(latents, SaeLensDense("saelens-topk"));
}

TEST(SaeEncoderParity, SparsifyTopK) {
  const SaeLatents latents = Encode("sparsify/layers.1", 64);
  EXPECT_EQ(latents.k, 16);
  ExpectLatentsMatch(latents, SparsifyDense());
}

TEST(SaeEncoderParity, ATeamAndAStridedInputGiveTheSameLatents) {
  auto sae = LoadSae(SaeFixture("saelens-standard"));
  ASSERT_TRUE(sae) << sae.error();
  SetBlasThreads(1);
  const std::vector<float> x = Activations();
  // The rows inside a wider buffer, as a site's columns may lie in a batch.
  constexpr int64_t kStride = kDIn + 7;
  std::vector<float> strided(kTokens * kStride, 1e9f);
  for (int64_t t = 0; t < kTokens; ++t) {
    std::copy_n(x.data() + t * kDIn, kDIn, strided.data() + t * kStride);
  }
  SaeEncoder encoder(*sae, 64);
  SaeLatents alone, teamed;
  encoder.EncodeTopK(x.data(), kDIn, kTokens, &alone);
  ThreadTeam team(2);
  encoder.EncodeTopK(strided.data(), kStride, kTokens, &teamed, &team);
  EXPECT_EQ(alone.ids, teamed.ids);
  EXPECT_EQ(alone.values, teamed.values);
  EXPECT_EQ(alone.counts, teamed.counts);
}

}  // namespace
}  // namespace actex
