#include "model/random_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/kernels/half_float.h"
#include "model/model_weights.h"
#include "model/shard_plan.h"
#include "tests/model/model_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

RandomModelOptions Tiny(const std::string& dir, uint64_t seed = 1) {
  RandomModelOptions options;
  options.output_dir = dir;
  options.preset = "tiny";
  options.seed = seed;
  return options;
}

std::vector<char> FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<SiteActivations> RunOneShard(const std::string& dir, const std::vector<Site>& sites) {
  auto weights = ModelWeights::Open(dir);
  EXPECT_TRUE(weights.has_value()) << weights.error();
  if (!weights) return {};
  PackedBatch batch = test_support::SingleSequence({1, 50, 300, 4000, 7, 7, 2});
  auto captures = test_support::RunShards(*weights, 1, sites, batch);
  return captures.empty() ? std::vector<SiteActivations>{} : captures[0];
}

TEST(RandomModel, FamilyPresetsHaveTheRealModelsShapesAndFeatures) {
  struct Expected {
    const char* preset;
    const char* model_type;
    int hidden, layers, heads, kv_heads, head_dim;
    MoeConfig moe = {};  // every layer routed when experts > 0
  };
  const MoeConfig olmoe{
      .experts = 64, .top_k = 8, .expert_intermediate = 1024, .renormalize = false};
  const MoeConfig qwen3_moe{.experts = 128, .top_k = 8, .expert_intermediate = 768};
  const MoeConfig mixtral{.experts = 8, .top_k = 2, .expert_intermediate = 14336};
  for (const Expected& e : {Expected{"gpt2", "gpt2", 768, 12, 12, 12, 64},
                            Expected{"llama-3.2-1b", "llama", 2048, 16, 32, 8, 64},
                            Expected{"gemma-2-2b", "gemma2", 2304, 26, 8, 4, 256},
                            Expected{"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 128},
                            Expected{"mistral-7b", "mistral", 4096, 32, 32, 8, 128},
                            Expected{"olmoe-1b-7b", "olmoe", 2048, 16, 16, 16, 128, olmoe},
                            Expected{"qwen3-30b-a3b", "qwen3_moe", 2048, 48, 32, 4, 128, qwen3_moe},
                            Expected{"mixtral-8x7b", "mixtral", 4096, 32, 32, 8, 128, mixtral}}) {
    RandomModelOptions options;
    options.preset = e.preset;
    auto config = RandomModelConfig(options);
    ASSERT_TRUE(config.has_value()) << e.preset << ": " << config.error();
    EXPECT_EQ(config->model_type, e.model_type);
    EXPECT_EQ(config->hidden, e.hidden) << e.preset;
    EXPECT_EQ(config->layers, e.layers) << e.preset;
    EXPECT_EQ(config->heads, e.heads) << e.preset;
    EXPECT_EQ(config->kv_heads, e.kv_heads) << e.preset;
    EXPECT_EQ(config->head_dim, e.head_dim) << e.preset;
    EXPECT_EQ(config->moe.experts, e.moe.experts) << e.preset;
    EXPECT_EQ(config->moe.top_k, e.moe.top_k) << e.preset;
    EXPECT_EQ(config->moe.expert_intermediate, e.moe.expert_intermediate) << e.preset;
    EXPECT_EQ(config->moe.renormalize, e.moe.renormalize) << e.preset;
    if (e.moe.experts > 0) {
      EXPECT_EQ(config->moe.layer_sparse, std::vector<bool>(e.layers, true)) << e.preset;
      EXPECT_FALSE(config->tie_word_embeddings) << e.preset;
    }
  }
  RandomModelOptions options;
  options.preset = "gemma-2-2b";
  EXPECT_EQ(RandomModelConfig(options)->attn_softcap, 50.0f);
  options.preset = "llama-3.2-1b";
  EXPECT_EQ(RandomModelConfig(options)->rope.scaling, RopeScaling::kLlama3);
}

// A one-layer OLMoE of the real widths but a small vocabulary, as the bench makes it:
// the layer override keeps every layer routed, the files load, and two shards give the
// one-shard activations and routing.
TEST(RandomModel, SmallLayerCopyOfAMixtureOfExpertsPresetRunsSharded) {
  TempDir dir;
  auto written = MakeRandomModel({.output_dir = dir.path(),
                                  .preset = "olmoe-1b-7b",
                                  .vocab_size = 512,
                                  .layers = 1,
                                  .dtype = "bfloat16"});
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_EQ(written->moe.layer_sparse, std::vector<bool>{true});
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_TRUE(weights.has_value()) << weights.error();
  const std::vector<Site> sites = {
      {SiteKind::kRouterLogits, 0}, {SiteKind::kExpertIds, 0}, {SiteKind::kResidPost, 0}};
  const PackedBatch batch = test_support::SingleSequence({5, 17, 300, 2, 41, 77, 8, 1});
  const auto one = test_support::RunShards(*weights, 1, sites, batch);
  const auto two = test_support::RunShards(*weights, 2, sites, batch);
  EXPECT_EQ(two[1][1].integers, one[0][1].integers);  // the same experts on every shard
  EXPECT_EQ(two[0][0].values, two[1][0].values);      // the same router logits to the bit
  const float scale = test_support::MaxAbs(one[0][2].values);
  EXPECT_GT(scale, 0.0f);
  EXPECT_LE(test_support::MaxAbsDifference(two[0][2].values, one[0][2].values), 1e-5f * scale);
}

TEST(RandomModel, Gpt2PresetOpensAndShardsLikeOneShard) {
  TempDir dir;
  RandomModelOptions options;
  options.output_dir = dir.path();
  options.preset = "gpt2";
  options.layers = 1;
  options.vocab_size = 256;
  options.dtype = "bfloat16";
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_TRUE(weights.has_value()) << weights.error();
  const std::vector<Site> sites = {
      {SiteKind::kAttnOut, 0}, {SiteKind::kMlpPost, 0}, {SiteKind::kResidPost, 0}};
  const PackedBatch batch = test_support::SingleSequence({1, 50, 200, 40, 7, 7, 2});
  const auto one = test_support::RunShards(*weights, 1, sites, batch);
  const auto five = test_support::RunShards(*weights, 5, sites, batch);  // 12 heads: 3,3,2,2,2
  for (size_t i = 0; i < sites.size(); ++i) {
    EXPECT_LE(test_support::MaxAbsDifference(five[0][i].values, one[0][i].values),
              1e-5f * test_support::MaxAbs(one[0][i].values))
        << sites[i].HookName();
  }
}

TEST(RandomModel, PresetsHaveTheRealModelsShapes) {
  RandomModelOptions options;
  options.preset = "qwen2.5-0.5b";
  auto small = RandomModelConfig(options);
  ASSERT_TRUE(small.has_value()) << small.error();
  EXPECT_EQ(small->vocab_size, 151936);
  EXPECT_EQ(small->hidden, 896);
  EXPECT_EQ(small->intermediate, 4864);
  EXPECT_EQ(small->layers, 24);
  EXPECT_EQ(small->heads, 14);
  EXPECT_EQ(small->kv_heads, 2);
  EXPECT_EQ(small->head_dim, 64);
  EXPECT_TRUE(small->tie_word_embeddings);
  EXPECT_EQ(small->rope_theta, 1e6f);
  EXPECT_EQ(small->rms_norm_eps, 1e-6f);

  options.preset = "qwen2.5-7b";
  options.dtype = "bfloat16";
  auto large = RandomModelConfig(options);
  ASSERT_TRUE(large.has_value()) << large.error();
  EXPECT_EQ(large->vocab_size, 152064);
  EXPECT_EQ(large->hidden, 3584);
  EXPECT_EQ(large->intermediate, 18944);
  EXPECT_EQ(large->layers, 28);
  EXPECT_EQ(large->heads, 28);
  EXPECT_EQ(large->kv_heads, 4);
  EXPECT_FALSE(large->tie_word_embeddings);
  EXPECT_EQ(large->torch_dtype, "bfloat16");

  options.preset = "tiny";
  auto tiny = RandomModelConfig(options);
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->vocab_size, 4096);
  EXPECT_EQ(tiny->hidden, 64);
  EXPECT_EQ(tiny->layers, 2);
}

TEST(RandomModel, WritesAModelThatLoadsWithItsConfig) {
  TempDir dir;
  RandomModelOptions options = Tiny(dir.path());
  options.preset = "qwen2.5-0.5b";
  options.layers = 1;
  options.vocab_size = 64;
  options.dtype = "bfloat16";
  auto made = MakeRandomModel(options);
  ASSERT_TRUE(made.has_value()) << made.error();
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_TRUE(weights.has_value()) << weights.error();
  const ModelConfig& config = (*weights)->config();
  EXPECT_EQ(config.hidden, 896);
  EXPECT_EQ(config.intermediate, 4864);
  EXPECT_EQ(config.heads, 14);
  EXPECT_EQ(config.kv_heads, 2);
  EXPECT_EQ(config.layers, 1);
  EXPECT_EQ(config.vocab_size, 64);
  EXPECT_EQ(config.rope_theta, 1e6f);
  EXPECT_EQ(config.name, made->name);
  EXPECT_TRUE(config.tie_word_embeddings);
  EXPECT_EQ(config.bos_token_id, 151643);
  EXPECT_EQ((*weights)->Get("model.embed_tokens.weight").dtype, WeightDtype::kBF16);
  auto file = SafetensorsFile::Open(dir.File("model.safetensors"));
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ((*file)->tensors().count("lm_head.weight"), 0u);
}

TEST(RandomModel, UntiedModelsCarryAnLmHead) {
  TempDir dir;
  RandomModelOptions options = Tiny(dir.path());
  options.tie_word_embeddings = false;
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_TRUE(weights.has_value()) << weights.error();
  EXPECT_FALSE((*weights)->config().tie_word_embeddings);
  auto file = SafetensorsFile::Open(dir.File("model.safetensors"));
  ASSERT_TRUE(file.has_value());
  ASSERT_EQ((*file)->tensors().count("lm_head.weight"), 1u);
  EXPECT_EQ((*file)->tensors().at("lm_head.weight").shape, (std::vector<int64_t>{4096, 64}));
}

TEST(RandomModel, SameOptionsGiveTheSameBytesAndSeedsDiffer) {
  TempDir a, b, c;
  ASSERT_TRUE(MakeRandomModel(Tiny(a.path(), 7)).has_value());
  ASSERT_TRUE(MakeRandomModel(Tiny(b.path(), 7)).has_value());
  ASSERT_TRUE(MakeRandomModel(Tiny(c.path(), 8)).has_value());
  EXPECT_EQ(FileBytes(a.File("model.safetensors")), FileBytes(b.File("model.safetensors")));
  EXPECT_NE(FileBytes(a.File("model.safetensors")), FileBytes(c.File("model.safetensors")));
}

TEST(RandomModel, SixteenBitModelsAreTheFloat32ModelRounded) {
  TempDir f32, bf16, f16;
  RandomModelOptions options = Tiny(f32.path());
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  options.output_dir = bf16.path();
  options.dtype = "bfloat16";
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  options.output_dir = f16.path();
  options.dtype = "float16";
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  auto wide = ModelWeights::Open(f32.path());
  auto brain = ModelWeights::Open(bf16.path());
  auto half = ModelWeights::Open(f16.path());
  ASSERT_TRUE(wide.has_value() && brain.has_value() && half.has_value());
  EXPECT_EQ((*half)->config().torch_dtype, "float16");
  for (const char* name : {"model.layers.1.self_attn.k_proj.weight", "model.norm.weight"}) {
    const WeightView w = (*wide)->Get(name), b = (*brain)->Get(name), h = (*half)->Get(name);
    ASSERT_EQ(b.dtype, WeightDtype::kBF16);
    ASSERT_EQ(h.dtype, WeightDtype::kF16);
    for (int64_t i = 0; i < w.rows * w.cols; ++i) {
      const float value = static_cast<const float*>(w.data)[i];
      uint16_t brain_bits, half_bits;
      std::memcpy(&brain_bits, static_cast<const uint8_t*>(b.data) + 2 * i, 2);
      std::memcpy(&half_bits, static_cast<const uint8_t*>(h.data) + 2 * i, 2);
      ASSERT_EQ(brain_bits, FloatToBfloat16Bits(value)) << name << " " << i;
      ASSERT_EQ(half_bits, FloatToFloat16(value)) << name << " " << i;
    }
  }
}

TEST(RandomModel, WeightScalesKeepActivationsOrderOne) {
  TempDir dir;
  ASSERT_TRUE(MakeRandomModel(Tiny(dir.path())).has_value());
  const auto captures =
      RunOneShard(dir.path(), {{SiteKind::kEmbed, -1}, {SiteKind::kResidPost, 1}});
  ASSERT_EQ(captures.size(), 2u);
  for (const SiteActivations& capture : captures) {
    double squares = 0;
    for (float value : capture.values) {
      ASSERT_TRUE(std::isfinite(value));
      squares += double{value} * value;
    }
    const double rms = std::sqrt(squares / capture.values.size());
    EXPECT_GT(rms, 0.3) << capture.site.HookName();
    EXPECT_LT(rms, 10.0) << capture.site.HookName();
  }
}

TEST(RandomModel, ShardedFilesLoadThroughTheIndexWithIdenticalActivations) {
  TempDir single, sharded;
  ASSERT_TRUE(MakeRandomModel(Tiny(single.path())).has_value());
  RandomModelOptions options = Tiny(sharded.path());
  options.max_file_bytes = 200000;  // the 1 MB embedding gets a file of its own
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  EXPECT_FALSE(fs::exists(sharded.File("model.safetensors")));
  EXPECT_TRUE(fs::exists(sharded.File("model.safetensors.index.json")));
  int files = 0;
  for (const auto& entry : fs::directory_iterator(sharded.path())) {
    files += entry.path().filename().string().starts_with("model-") ? 1 : 0;
  }
  EXPECT_GE(files, 3);
  EXPECT_TRUE(
      fs::exists(sharded.File("model-00001-of-0000" + std::to_string(files) + ".safetensors")));

  const std::vector<Site> sites = {{SiteKind::kResidPost, 0}, {SiteKind::kLnFinal, -1}};
  const auto expected = RunOneShard(single.path(), sites);
  const auto actual = RunOneShard(sharded.path(), sites);
  ASSERT_EQ(expected.size(), 2u);
  ASSERT_EQ(actual.size(), 2u);
  EXPECT_EQ(actual[0].values, expected[0].values);
  EXPECT_EQ(actual[1].values, expected[1].values);

  // Writing a single file over a sharded folder removes the old shards.
  options.max_file_bytes = 0;
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  EXPECT_FALSE(fs::exists(sharded.File("model.safetensors.index.json")));
  EXPECT_FALSE(
      fs::exists(sharded.File("model-00001-of-0000") + std::to_string(files) + ".safetensors"));
  EXPECT_EQ(RunOneShard(sharded.path(), sites)[1].values, expected[1].values);
}

TEST(RandomModel, CopiesTheTokenizerFile) {
  TempDir dir, source;
  std::ofstream(source.File("tokenizer.json")) << "{\"model\": {}}";
  RandomModelOptions options = Tiny(dir.File("model"));
  options.tokenizer_file = source.File("tokenizer.json");
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  EXPECT_EQ(FileBytes(dir.File("model/tokenizer.json")), FileBytes(source.File("tokenizer.json")));

  options.tokenizer_file = source.File("missing.json");
  auto made = MakeRandomModel(options);
  ASSERT_FALSE(made.has_value());
  EXPECT_THAT(made.error(), HasSubstr("missing.json"));
}

TEST(RandomModel, RefusesUnknownPresetsAndDtypes) {
  TempDir dir;
  RandomModelOptions options = Tiny(dir.path());
  options.preset = "llama-7b";
  auto made = MakeRandomModel(options);
  ASSERT_FALSE(made.has_value());
  EXPECT_THAT(made.error(), HasSubstr("\"llama-7b\""));
  options.preset = "tiny";
  options.dtype = "float64";
  made = MakeRandomModel(options);
  ASSERT_FALSE(made.has_value());
  EXPECT_THAT(made.error(), HasSubstr("\"float64\""));
}

}  // namespace
}  // namespace actex
