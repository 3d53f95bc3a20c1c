#include "storage/latent_examples.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "tests/support/test_files.h"

namespace actex {
namespace {

constexpr int64_t kLatents = 40, kExamples = 4, kStored = 6;

// One token's stored latents, as a shard holds them.
struct Token {
  int64_t doc_id;
  int32_t position;
  std::vector<int32_t> ids;   // [kStored]
  std::vector<float> values;  // [kStored]
};

// Tokens of 30 documents whose values come from a few levels, so many tie.
std::vector<Token> TiedTokens() {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> level(-1, 5);
  std::vector<int32_t> latents(kLatents);
  for (int32_t latent = 0; latent < kLatents; ++latent) latents[latent] = latent;
  std::vector<Token> tokens;
  for (int64_t doc = 0; doc < 30; ++doc) {
    for (int32_t position = 0; position < 1 + doc % 7; ++position) {
      // A token's stored latents are distinct.
      std::shuffle(latents.begin(), latents.end(), random);
      Token token{doc * 3, position, {latents.begin(), latents.begin() + kStored}, {}};
      for (int k = 0; k < kStored; ++k) {
        token.values.push_back(0.25f * static_cast<float>(level(random)));  // some <= 0
      }
      tokens.push_back(std::move(token));
    }
  }
  return tokens;
}

void Add(LatentExamples& examples, const Token& token) {
  ASSERT_TRUE(examples.AddToken(token.doc_id, token.position, token.ids, token.values));
}

TEST(LatentExamples, MergeOfAnySplitEqualsTheWholeToTheBit) {
  const std::vector<Token> tokens = TiedTokens();
  LatentExamples whole(kLatents, kExamples);
  for (const Token& token : tokens) Add(whole, token);
  for (int parts : {2, 3, 7}) {
    std::mt19937 random(static_cast<uint32_t>(parts));
    std::vector<LatentExamples> split(static_cast<size_t>(parts),
                                      LatentExamples(kLatents, kExamples));
    // Tokens go to parts at random and in reverse order: neither order nor split matters.
    for (auto token = tokens.rbegin(); token != tokens.rend(); ++token) {
      Add(split[random() % static_cast<uint32_t>(parts)], *token);
    }
    LatentExamplesBySite merged;
    for (const LatentExamples& part : split) {
      ASSERT_TRUE(MergeLatentExamples(merged, {{"blocks.0.hook_resid_post", part}}));
    }
    EXPECT_TRUE(merged.at("blocks.0.hook_resid_post") == whole) << parts << " parts";
    EXPECT_EQ(*EncodeLatentExamples(merged),
              *EncodeLatentExamples({{"blocks.0.hook_resid_post", whole}}));
  }
}

TEST(LatentExamples, TiesGoToTheLowerDocIdThenPosition) {
  LatentExamples examples(3, 2);
  const std::vector<int32_t> ids = {1};
  const std::vector<float> value = {2.0f};
  ASSERT_TRUE(examples.AddToken(9, 0, ids, value));
  ASSERT_TRUE(examples.AddToken(5, 3, ids, value));
  ASSERT_TRUE(examples.AddToken(5, 1, ids, value));
  ASSERT_TRUE(examples.AddToken(12, 0, ids, std::vector<float>{1.5f}));
  const std::vector<LatentExample> kept = examples.ExamplesOf(1);
  EXPECT_EQ(kept, (std::vector<LatentExample>{{2.0f, 1, 5}, {2.0f, 3, 5}}));
  EXPECT_EQ(examples.fire_count(1), 4);
  EXPECT_EQ(examples.value_sum(1), 7.5);
  EXPECT_EQ(examples.ExamplesOf(0), (std::vector<LatentExample>(2)));  // never fired: unused
}

TEST(LatentExamples, OnlyFiniteValuesAboveZeroFire) {
  LatentExamples examples(4, 2);
  const std::vector<int32_t> ids = {0, 1, 2, 3};
  const std::vector<float> values = {0.0f, -1.0f, NAN, INFINITY};
  ASSERT_TRUE(examples.AddToken(0, 0, ids, values));
  for (int64_t latent = 0; latent < 4; ++latent) EXPECT_EQ(examples.fire_count(latent), 0);
  // An unused slot's id (here -1, with value 0) is not looked at.
  EXPECT_TRUE(examples.AddToken(0, 1, std::vector<int32_t>{-1}, std::vector<float>{0.0f}));
}

TEST(LatentExamples, ValueSumIsExactFixedPoint) {
  LatentExamples examples(1, 1);
  const std::vector<int32_t> id = {0};
  // 1e8 + 3 × 2^-20 in double arithmetic depends on the order; in fixed point it does not.
  for (float value : {1e8f, 0x1p-20f, 0x1p-20f, 0x1p-20f}) {
    ASSERT_TRUE(examples.AddToken(0, 0, id, std::vector<float>{value}));
  }
  EXPECT_EQ(examples.value_sum_fixed(0),
            (static_cast<unsigned __int128>(100000000) << 32) + 3 * (1u << 12));
}

TEST(LatentExamples, IdOutsideTheSaeIsRefused) {
  LatentExamples examples(4, 2);
  auto added = examples.AddToken(3, 2, std::vector<int32_t>{1, 4}, std::vector<float>{1, 1});
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error(), "document 3 position 2: latent id 4 is not below the SAE's 4 latents");
  EXPECT_EQ(examples.fire_count(1), 0);  // nothing of the token was taken
}

TEST(LatentExamples, MergeOfAnotherShapeIsRefusedNamingTheSite) {
  LatentExamplesBySite into = {{"s", LatentExamples(4, 2)}};
  auto merged = MergeLatentExamples(into, {{"s", LatentExamples(5, 2)}});
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.error(), "site s: latent examples of 5 latents x 2 examples cannot join 4 x 2");
}

TEST(LatentExamplesFile, SavedAndLoadedEqual) {
  TempDir dir;
  LatentExamplesBySite by_site = {{"a.hook", LatentExamples(kLatents, kExamples)},
                                  {"b.hook", LatentExamples(kLatents, kExamples)}};
  for (const Token& token : TiedTokens())
    Add(by_site.at(token.doc_id % 2 ? "a.hook" : "b.hook"), token);
  ASSERT_TRUE(SaveLatentExamples(dir.File("x.safetensors"), by_site));
  auto loaded = LoadLatentExamples(dir.File("x.safetensors"));
  ASSERT_TRUE(loaded) << loaded.error();
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_TRUE(loaded->at("a.hook") == by_site.at("a.hook"));
  EXPECT_TRUE(loaded->at("b.hook") == by_site.at("b.hook"));
}

// The file of TiedTokens under site "s", with `damage` applied to the bytes of tensor `name`.
std::string DamagedFile(const TempDir& dir, const std::string& name,
                        const std::function<void(char*)>& damage) {
  LatentExamples examples(kLatents, kExamples);
  for (const Token& token : TiedTokens()) Add(examples, token);
  std::string bytes = *EncodeLatentExamples({{"s", examples}});
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  const auto json = nlohmann::json::parse(bytes.substr(8, header));
  const int64_t begin = json.at(name).at("data_offsets")[0].get<int64_t>();
  damage(bytes.data() + 8 + header + begin);
  WriteBytes(dir.File("bad.safetensors"), bytes);
  return dir.File("bad.safetensors");
}

TEST(LatentExamplesFile, DamageIsRefusedNamingTheTensor) {
  TempDir dir;
  struct Case {
    std::string tensor;
    std::function<void(char*)> damage;
    std::string message;
  };
  const Case cases[] = {
      {"s.examples.values", [](char* data) { reinterpret_cast<float*>(data)[1] = 1e9f; },
       "tensor s.examples.values is not strongest first at latent 0"},
      {"s.examples.doc_ids", [](char* data) { reinterpret_cast<int64_t*>(data)[0] = -7; },
       "tensor s.examples.values holds a malformed example at latent 0"},
      {"s.value_sum", [](char* data) { reinterpret_cast<double*>(data)[2] += 1; },
       "tensor s.value_sum disagrees with value_sum_fixed at latent 2"},
      {"s.fire_count", [](char* data) { reinterpret_cast<int64_t*>(data)[3] = 0; },
       "tensor s.fire_count counts fewer firings than examples at latent 3"},
  };
  for (const Case& test : cases) {
    const std::string path = DamagedFile(dir, test.tensor, test.damage);
    auto loaded = LoadLatentExamples(path);
    ASSERT_FALSE(loaded) << test.tensor;
    EXPECT_EQ(loaded.error(), path + ": " + test.message);
  }
}

TEST(LatentExamplesFile, AnotherFormatIsRefused) {
  TempDir dir;
  WriteBytes(dir.File("shard.safetensors"), std::string("\x02\0\0\0\0\0\0\0{}", 10));
  auto loaded = LoadLatentExamples(dir.File("shard.safetensors"));
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().find("expected actex-latent-examples version 1"), std::string::npos)
      << loaded.error();
}

}  // namespace
}  // namespace actex
