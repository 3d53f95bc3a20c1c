// Each family's config.json (tests/fixtures/model-families) read into its features, and
// every field that would change the math and is not implemented refused by name.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/architecture.h"
#include "model/config_reader.h"
#include "model/kernels/rope_frequencies.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "tests/model/model_test_util.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

std::string FamilyDir(const std::string& family) {
  return std::string(ACTEX_FIXTURES_DIR) + "/model-families/" + family;
}

nlohmann::json FamilyConfigJson(const std::string& family) {
  std::ifstream in(FamilyDir(family) + "/config.json");
  return nlohmann::json::parse(in);
}

ModelConfig LoadOrFail(const std::string& dir) {
  auto config = LoadModelConfig(dir);
  EXPECT_TRUE(config.has_value()) << config.error();
  return config.value_or(ModelConfig{});
}

// The error LoadModelConfig gives for `family`'s config with `edit` applied.
std::string ErrorAfter(const std::string& family, void (*edit)(nlohmann::json&)) {
  testing::TempDir dir;
  nlohmann::json json = FamilyConfigJson(family);
  edit(json);
  std::ofstream(dir / "config.json") << json.dump(2);
  auto config = LoadModelConfig(dir.path());
  EXPECT_FALSE(config.has_value()) << family;
  return config.has_value() ? std::string() : config.error();
}

TEST(FamilyConfig, LlamaReadsLlama3RopeScalingAndBiases) {
  const ModelConfig c = LoadOrFail(FamilyDir("llama"));
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.rope.scaling, RopeScaling::kLlama3);
  EXPECT_EQ(c.rope.theta, 500000.0f);
  EXPECT_EQ(c.rope.original_max_positions, 64.0f);
  // The fixture README: j = 0 unchanged, j = 1 smoothed to 0.0794, j >= 2 divided by 8.
  const std::vector<float> scaled = RopeInverseFrequencies(c.head_dim, c.rope);
  RopeConfig plain = c.rope;
  plain.scaling = RopeScaling::kNone;
  const std::vector<float> unscaled = RopeInverseFrequencies(c.head_dim, plain);
  EXPECT_EQ(scaled[0], unscaled[0]);
  EXPECT_NEAR(scaled[1], 0.0794f, 1e-4f);
  for (size_t j = 2; j < scaled.size(); ++j) EXPECT_EQ(scaled[j], unscaled[j] / 8.0f);
}

TEST(FamilyConfig, NewerRopeParametersEqualRopeScaling) {
  testing::TempDir dir;
  nlohmann::json json = FamilyConfigJson("llama");
  json["rope_parameters"] = json["rope_scaling"];
  json["rope_parameters"]["rope_theta"] = json["rope_theta"];
  json.erase("rope_scaling");
  json.erase("rope_theta");
  std::ofstream(dir / "config.json") << json.dump(2);
  const ModelConfig newer = LoadOrFail(dir.path());
  const ModelConfig older = LoadOrFail(FamilyDir("llama"));
  EXPECT_EQ(RopeInverseFrequencies(16, newer.rope), RopeInverseFrequencies(16, older.rope));
}

TEST(FamilyConfig, EachFamilyHasItsFeatures) {
  const ModelConfig mistral = LoadOrFail(FamilyDir("mistral"));
  EXPECT_EQ(mistral.head_dim, 16);  // explicit, not hidden / heads = 8
  for (int layer = 0; layer < mistral.layers; ++layer) EXPECT_TRUE(mistral.Slides(layer));
  EXPECT_EQ(mistral.sliding_window, 16);

  const ModelConfig qwen3 = LoadOrFail(FamilyDir("qwen3"));
  EXPECT_TRUE(qwen3.qk_norm);
  EXPECT_EQ(qwen3.head_dim, 32);
  EXPECT_FALSE(qwen3.Slides(0));

  const ModelConfig gemma2 = LoadOrFail(FamilyDir("gemma2"));
  EXPECT_EQ(gemma2.norm, NormKind::kRmsOnePlusWeight);
  EXPECT_EQ(gemma2.mlp, MlpKind::kGatedGeluTanh);
  EXPECT_TRUE(gemma2.sandwich_norms);
  EXPECT_EQ(gemma2.embed_scale, 8.0f);
  EXPECT_EQ(gemma2.attention_multiplier, static_cast<float>(std::pow(24.0, -0.5)));
  EXPECT_EQ(gemma2.attn_softcap, 50.0f);
  EXPECT_EQ(gemma2.final_softcap, 30.0f);
  EXPECT_EQ(gemma2.layer_slides, (std::vector<bool>{true, false, true, false}));
  EXPECT_TRUE(gemma2.tie_word_embeddings);

  const ModelConfig gemma3 = LoadOrFail(FamilyDir("gemma3_text"));
  EXPECT_TRUE(gemma3.qk_norm);
  EXPECT_EQ(gemma3.layer_slides, (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(gemma3.RopeOf(2).scaling, RopeScaling::kLinear);
  EXPECT_EQ(gemma3.RopeOf(2).theta, 1e6f);
  EXPECT_EQ(gemma3.RopeOf(0).scaling, RopeScaling::kNone);
  EXPECT_EQ(gemma3.RopeOf(0).theta, 10000.0f);

  const ModelConfig gpt2 = LoadOrFail(FamilyDir("gpt2"));
  EXPECT_EQ(gpt2.norm, NormKind::kLayerNorm);
  EXPECT_EQ(gpt2.intermediate, 256);  // n_inner null: 4 * n_embd
  EXPECT_EQ(gpt2.max_positions, 256);
  EXPECT_FALSE(gpt2.rotary);
  EXPECT_EQ(gpt2.rms_norm_eps, 1e-5f);
}

TEST(FamilyConfig, RefusesWhatWouldChangeTheMathNamingTheField) {
  EXPECT_THAT(
      ErrorAfter("llama", [](nlohmann::json& j) { j["rope_scaling"]["rope_type"] = "yarn"; }),
      HasSubstr("rope_type \"yarn\" is not supported"));
  EXPECT_THAT(
      ErrorAfter("llama", [](nlohmann::json& j) { j["rope_scaling"].erase("low_freq_factor"); }),
      HasSubstr("low_freq_factor"));
  EXPECT_THAT(ErrorAfter("llama", [](nlohmann::json& j) { j["hidden_act"] = "gelu"; }),
              HasSubstr("hidden_act"));
  EXPECT_THAT(ErrorAfter("gpt2", [](nlohmann::json& j) { j["use_parallel_residual"] = true; }),
              HasSubstr("use_parallel_residual"));
  EXPECT_THAT(
      ErrorAfter("gpt2", [](nlohmann::json& j) { j["scale_attn_by_inverse_layer_idx"] = true; }),
      HasSubstr("scale_attn_by_inverse_layer_idx"));
  EXPECT_THAT(ErrorAfter("gpt2", [](nlohmann::json& j) { j["activation_function"] = "relu"; }),
              HasSubstr("activation_function"));
  EXPECT_THAT(ErrorAfter("qwen3", [](nlohmann::json& j) { j["sliding_window"] = 16; }),
              HasSubstr("sliding_window"));
  EXPECT_THAT(ErrorAfter("gemma2", [](nlohmann::json& j) { j["hidden_activation"] = "gelu"; }),
              HasSubstr("hidden_activation"));
  EXPECT_THAT(ErrorAfter("gemma2", [](nlohmann::json& j) { j.erase("query_pre_attn_scalar"); }),
              HasSubstr("query_pre_attn_scalar"));
  EXPECT_THAT(
      ErrorAfter("gemma3_text", [](nlohmann::json& j) { j["attn_logit_softcapping"] = 50.0; }),
      HasSubstr("attn_logit_softcapping"));
  EXPECT_THAT(ErrorAfter("gemma3_text",
                         [](nlohmann::json& j) {
                           j["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
                         }),
              HasSubstr("rope_type \"dynamic\""));
  EXPECT_THAT(ErrorAfter("mistral", [](nlohmann::json& j) { j["sliding_window"] = "16"; }),
              HasSubstr("sliding_window"));
}

TEST(FamilyWeights, NamesAMissingFamilyTensor) {
  testing::TempDir dir;
  testing::CopyFolder(FamilyDir("qwen3"), dir.path());
  nlohmann::json json = FamilyConfigJson("qwen3");
  json["num_hidden_layers"] = 5;  // the files hold four layers
  std::ofstream(dir / "config.json") << json.dump(2);
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("has no tensor model.layers.4.self_attn.q_proj.weight"));
  EXPECT_THAT(weights.error(), HasSubstr("qwen3"));
}

TEST(FamilyArchitecture, Gpt2SplitsTheFusedConv1DAttentionWeight) {
  const ModelConfig gpt2 = LoadOrFail(FamilyDir("gpt2"));
  bool found = false;
  for (const TensorSpec& spec : ArchitectureTensors(gpt2)) {
    if (spec.name != "transformer.h.0.attn.c_attn.weight") continue;
    found = true;
    EXPECT_EQ(spec.shape, (std::vector<int64_t>{64, 192}));  // Conv1D: [in, out]
    EXPECT_EQ(spec.layout, TensorLayout::kConv1D);
    EXPECT_EQ(spec.split, TensorSplit::kOutputByFusedQkv);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace actex
