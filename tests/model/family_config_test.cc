// Each family's config.json (tests/fixtures/model-families and moe-families) read into
// its features, every field that would change the math and is not implemented refused
// by name, and the tensors and shard slices the features imply.

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
#include "model/shard_plan.h"
#include "model/shard_weights.h"
#include "tests/model/model_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

std::string FamilyDir(const std::string& family) {
  const bool moe =
      family == "mixtral" || family == "qwen2_moe" || family == "qwen3_moe" || family == "olmoe";
  return std::string(ACTEX_FIXTURES_DIR) + (moe ? "/moe-families/" : "/model-families/") + family;
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
  TempDir dir;
  nlohmann::json json = FamilyConfigJson(family);
  edit(json);
  std::ofstream(dir.File("config.json")) << json.dump(2);
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
  TempDir dir;
  nlohmann::json json = FamilyConfigJson("llama");
  json["rope_parameters"] = json["rope_scaling"];
  json["rope_parameters"]["rope_theta"] = json["rope_theta"];
  json.erase("rope_scaling");
  json.erase("rope_theta");
  std::ofstream(dir.File("config.json")) << json.dump(2);
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
  TempDir dir;
  test_support::CopyFolder(FamilyDir("qwen3"), dir.path());
  nlohmann::json json = FamilyConfigJson("qwen3");
  json["num_hidden_layers"] = 5;  // the files hold four layers
  std::ofstream(dir.File("config.json")) << json.dump(2);
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

TEST(MoeConfig, EachMixtureOfExpertsFixtureReadsItsRouting) {
  const ModelConfig mixtral = LoadOrFail(FamilyDir("mixtral"));
  EXPECT_EQ(mixtral.moe.experts, 8);
  EXPECT_EQ(mixtral.moe.top_k, 2);
  EXPECT_EQ(mixtral.moe.expert_intermediate, 32);  // intermediate_size is an expert's
  EXPECT_TRUE(mixtral.moe.renormalize);            // no flag: always
  EXPECT_EQ(mixtral.moe.shared_expert_intermediate, 0);
  EXPECT_EQ(mixtral.moe.layer_sparse, std::vector<bool>(4, true));
  EXPECT_FALSE(mixtral.qkv_bias);

  const ModelConfig qwen2_moe = LoadOrFail(FamilyDir("qwen2_moe"));
  EXPECT_EQ(qwen2_moe.moe.expert_intermediate, 32);
  EXPECT_EQ(qwen2_moe.intermediate, 96);  // the dense layer's
  EXPECT_FALSE(qwen2_moe.moe.renormalize);
  EXPECT_EQ(qwen2_moe.moe.shared_expert_intermediate, 64);
  EXPECT_EQ(qwen2_moe.moe.layer_sparse, (std::vector<bool>{true, true, false, true}));
  EXPECT_TRUE(qwen2_moe.qkv_bias);
  EXPECT_FALSE(qwen2_moe.IsSparse(2));

  const ModelConfig qwen3_moe = LoadOrFail(FamilyDir("qwen3_moe"));
  EXPECT_EQ(qwen3_moe.head_dim, 32);
  EXPECT_TRUE(qwen3_moe.qk_norm);
  EXPECT_FALSE(qwen3_moe.qk_norm_whole_projection);
  EXPECT_TRUE(qwen3_moe.moe.renormalize);
  EXPECT_EQ(qwen3_moe.moe.layer_sparse, std::vector<bool>(4, true));

  const ModelConfig olmoe = LoadOrFail(FamilyDir("olmoe"));
  EXPECT_TRUE(olmoe.qk_norm_whole_projection);
  EXPECT_FALSE(olmoe.moe.renormalize);
  EXPECT_EQ(olmoe.moe.expert_intermediate, 32);
  EXPECT_EQ(olmoe.rope.theta, 10000.0f);
}

TEST(MoeConfig, MlpOnlyLayersAndDecoderSparseStepChooseTheRoutedLayers) {
  TempDir dir;
  nlohmann::json json = FamilyConfigJson("qwen3_moe");
  json["decoder_sparse_step"] = 2;  // layers 1 and 3
  json["mlp_only_layers"] = {3};
  std::ofstream(dir.File("config.json")) << json.dump(2);
  EXPECT_EQ(LoadOrFail(dir.path()).moe.layer_sparse,
            (std::vector<bool>{false, true, false, false}));
}

TEST(MoeConfig, RefusesWhatWouldChangeTheRoutingNamingTheField) {
  EXPECT_THAT(ErrorAfter("mixtral", [](nlohmann::json& j) { j["router_jitter_noise"] = 0.1; }),
              HasSubstr("router_jitter_noise"));
  EXPECT_THAT(ErrorAfter("olmoe", [](nlohmann::json& j) { j["clip_qkv"] = 8.0; }),
              HasSubstr("clip_qkv"));
  EXPECT_THAT(ErrorAfter("olmoe", [](nlohmann::json& j) { j["num_experts_per_tok"] = 9; }),
              HasSubstr("num_experts_per_tok 9 is more than num_experts 8"));
  EXPECT_THAT(
      ErrorAfter("qwen2_moe", [](nlohmann::json& j) { j["shared_expert_intermediate_size"] = 0; }),
      HasSubstr("shared_expert_intermediate_size"));
  EXPECT_THAT(ErrorAfter("qwen2_moe", [](nlohmann::json& j) { j["head_dim"] = 32; }),
              HasSubstr("head_dim 32"));
  EXPECT_THAT(ErrorAfter("qwen2_moe", [](nlohmann::json& j) { j["qkv_bias"] = false; }),
              HasSubstr("qkv_bias"));
  EXPECT_THAT(ErrorAfter("qwen2_moe", [](nlohmann::json& j) { j["use_sliding_window"] = true; }),
              HasSubstr("use_sliding_window"));
  EXPECT_THAT(ErrorAfter("qwen2_moe", [](nlohmann::json& j) { j["mlp_only_layers"] = {4}; }),
              HasSubstr("\"mlp_only_layers\" holds 4"));
  EXPECT_THAT(ErrorAfter("qwen3_moe", [](nlohmann::json& j) { j["sliding_window"] = 16; }),
              HasSubstr("sliding_window"));
  EXPECT_THAT(ErrorAfter("qwen3_moe", [](nlohmann::json& j) { j["hidden_act"] = "gelu"; }),
              HasSubstr("hidden_act"));
}

TEST(MoeArchitecture, ListsTheRouterEveryExpertAndTheSharedExpert) {
  int mixtral_experts = 0;
  for (const TensorSpec& spec : ArchitectureTensors(LoadOrFail(FamilyDir("mixtral")))) {
    if (spec.name == "model.layers.0.block_sparse_moe.experts.7.w2.weight") {
      EXPECT_EQ(spec.role, TensorRole::kExpertDown);
      EXPECT_EQ(spec.expert, 7);
      EXPECT_EQ(spec.shape, (std::vector<int64_t>{64, 32}));
      EXPECT_EQ(spec.split, TensorSplit::kInputByExpertColumns);
    }
    mixtral_experts += spec.role == TensorRole::kExpertGate;
  }
  EXPECT_EQ(mixtral_experts, 4 * 8);
  std::vector<std::string> layer2, layer3;
  for (const TensorSpec& spec : ArchitectureTensors(LoadOrFail(FamilyDir("qwen2_moe")))) {
    if (spec.layer == 2) layer2.push_back(spec.name);
    if (spec.layer == 3) layer3.push_back(spec.name);
  }
  EXPECT_THAT(layer2, ::testing::Contains("model.layers.2.mlp.down_proj.weight"));
  EXPECT_THAT(layer2, ::testing::Not(::testing::Contains("model.layers.2.mlp.gate.weight")));
  EXPECT_THAT(layer3, ::testing::Contains("model.layers.3.mlp.shared_expert_gate.weight"));
  EXPECT_THAT(layer3, ::testing::Not(::testing::Contains("model.layers.3.mlp.down_proj.weight")));
}

TEST(MoeShardWeights, EachShardHoldsAColumnSliceOfEveryExpertWhenTheyDoNotDivideEvenly) {
  auto weights = ModelWeights::Open(FamilyDir("qwen2_moe"));
  ASSERT_TRUE(weights.has_value()) << weights.error();
  const ModelConfig& config = (*weights)->config();
  for (int rank = 0; rank < 3; ++rank) {
    auto slice = PlanShard(config, rank, 3);
    ASSERT_TRUE(slice.has_value());
    auto shard = SliceShardWeights(**weights, *slice, 3);
    ASSERT_TRUE(shard.has_value()) << shard.error();
    const int expert_columns = rank < 2 ? 11 : 10;  // 32 over 3 shards
    const int shared_columns = rank < 1 ? 22 : 21;  // 64 over 3 shards
    const LayerShardWeights& layer = shard->layers[3];
    EXPECT_EQ(layer.router.out_features(), 8);  // replicated
    ASSERT_EQ(layer.experts.size(), 8u);
    for (const ExpertShardWeights& expert : layer.experts) {
      EXPECT_EQ(expert.gate.out_features(), expert_columns);
      EXPECT_EQ(expert.up.out_features(), expert_columns);
      EXPECT_EQ(expert.down.in_features(), expert_columns);
      EXPECT_EQ(expert.down.out_features(), 64);
    }
    EXPECT_EQ(layer.shared_expert.gate.out_features(), shared_columns);
    EXPECT_EQ(layer.shared_expert.down.in_features(), shared_columns);
    EXPECT_EQ(layer.shared_expert_gate.size(), 64u);
    EXPECT_TRUE(shard->layers[2].experts.empty());       // the dense layer
    EXPECT_EQ(shard->layers[2].down.in_features(), 32);  // 96 dense columns over 3
  }
}

// 8 experts over 2 or 4 shards: whole experts, an equal range each, so a shard reads
// only its own experts' pages; the shared expert is still cut by columns.
TEST(MoeShardWeights, EachShardHoldsWholeExpertsWhenTheyDivideEvenly) {
  auto weights = ModelWeights::Open(FamilyDir("qwen2_moe"));
  ASSERT_TRUE(weights.has_value()) << weights.error();
  const ModelConfig& config = (*weights)->config();
  for (int shards : {2, 4}) {
    for (int rank = 0; rank < shards; ++rank) {
      auto slice = PlanShard(config, rank, shards);
      ASSERT_TRUE(slice.has_value());
      const int per_shard = 8 / shards;
      EXPECT_EQ(slice->first_expert, rank * per_shard);
      EXPECT_EQ(slice->end_expert, (rank + 1) * per_shard);
      auto shard = SliceShardWeights(**weights, *slice, 3);
      ASSERT_TRUE(shard.has_value()) << shard.error();
      const LayerShardWeights& layer = shard->layers[3];
      for (int e = 0; e < 8; ++e) {
        const bool held = e >= slice->first_expert && e < slice->end_expert;
        const ExpertShardWeights& expert = layer.experts[e];
        EXPECT_EQ(expert.gate.out_features(), held ? 32 : 0) << "expert " << e;
        EXPECT_EQ(expert.down.in_features(), held ? 32 : 0) << "expert " << e;
        EXPECT_EQ(expert.gate.weight.data != nullptr, held) << "expert " << e;
      }
      EXPECT_EQ(layer.shared_expert.gate.out_features(), 64 / shards);
    }
  }
}

}  // namespace
}  // namespace actex
