#include "model/model_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/config_reader.h"
#include "tests/model/model_test_util.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

nlohmann::json FixtureConfig() {
  std::ifstream in(kTinyModelDir + "/config.json");
  return nlohmann::json::parse(in);
}

// Writes `config` as `dir`/config.json.
void WriteConfig(const std::string& dir, const nlohmann::json& config) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << config.dump(2);
}

TEST(LoadModelConfig, ReadsTheFixtureConfig) {
  auto config = LoadModelConfig(kTinyModelDir);
  ASSERT_TRUE(config.has_value()) << config.error();
  EXPECT_EQ(config->model_type, "qwen2");
  EXPECT_EQ(config->name, "qwen2-tiny");  // no _name_or_path: the folder's name
  EXPECT_EQ(config->vocab_size, 512);
  EXPECT_EQ(config->hidden, 64);
  EXPECT_EQ(config->intermediate, 176);
  EXPECT_EQ(config->layers, 2);
  EXPECT_EQ(config->heads, 4);
  EXPECT_EQ(config->kv_heads, 2);
  EXPECT_EQ(config->head_dim, 16);
  EXPECT_EQ(config->rope_theta, 1e6f);
  EXPECT_EQ(config->rms_norm_eps, 1e-6f);
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_EQ(config->torch_dtype, "float32");
  EXPECT_FALSE(config->bos_token_id.has_value());

  auto bf16 = LoadModelConfig(test_support::TinyBf16FixtureDir() + "/");
  ASSERT_TRUE(bf16.has_value()) << bf16.error();
  EXPECT_EQ(bf16->torch_dtype, "bfloat16");
  EXPECT_EQ(bf16->name, "model-bf16");  // a trailing slash does not hide the name
}

TEST(LoadModelConfig, RefusesOtherModelTypesNamingTheFile) {
  TempDir dir;
  auto json = FixtureConfig();
  json["model_type"] = "falcon";
  WriteConfig(dir.path(), json);
  auto config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error(), "model_type \"falcon\" in " + dir.path() +
                                "/config.json is not supported; actex supports: gemma2, "
                                "gemma3_text, gpt2, llama, mistral, mixtral, olmoe, qwen2, "
                                "qwen2_moe, qwen3, qwen3_moe");
}

TEST(LoadModelConfig, NamesAMissingField) {
  for (const char* field : {"hidden_size", "num_key_value_heads", "vocab_size", "model_type"}) {
    TempDir dir;
    auto json = FixtureConfig();
    json.erase(field);
    WriteConfig(dir.path(), json);
    auto config = LoadModelConfig(dir.path());
    ASSERT_FALSE(config.has_value()) << field;
    EXPECT_THAT(config.error(), HasSubstr(field));
    EXPECT_THAT(config.error(), HasSubstr(dir.path() + "/config.json"));
  }
}

TEST(LoadModelConfig, RefusesInconsistentHeadCounts) {
  TempDir dir;
  auto json = FixtureConfig();
  json["num_attention_heads"] = 5;  // 64 is not divisible by 5
  WriteConfig(dir.path(), json);
  auto config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("not divisible by num_attention_heads 5"));

  json["num_attention_heads"] = 4;
  json["num_key_value_heads"] = 3;
  WriteConfig(dir.path(), json);
  config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("not divisible by num_key_value_heads 3"));
}

TEST(LoadModelConfig, RefusesWrongTypesAndNonPositiveSizes) {
  TempDir dir;
  auto json = FixtureConfig();
  json["hidden_size"] = "64";
  WriteConfig(dir.path(), json);
  auto config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("\"hidden_size\" must be an integer"));

  json["hidden_size"] = 0;
  WriteConfig(dir.path(), json);
  config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(),
              HasSubstr("\"hidden_size\" must be an integer from 1 to 1073741824, got 0"));

  json["hidden_size"] = int64_t{1} << 31;
  WriteConfig(dir.path(), json);
  config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("from 1 to 1073741824, got 2147483648"));
}

TEST(LoadModelConfig, AppliesDefaultsAndReadsOptionalFields) {
  TempDir dir;
  auto json = FixtureConfig();
  json.erase("rope_theta");
  json.erase("torch_dtype");
  json["_name_or_path"] = "Qwen/Qwen2.5-0.5B";
  json["bos_token_id"] = 151643;
  WriteConfig(dir.path(), json);
  auto config = LoadModelConfig(dir.path());
  ASSERT_TRUE(config.has_value()) << config.error();
  EXPECT_EQ(config->rope_theta, 10000.0f);
  EXPECT_EQ(config->torch_dtype, "float32");
  EXPECT_EQ(config->name, "Qwen/Qwen2.5-0.5B");
  EXPECT_EQ(config->bos_token_id, 151643);

  json["num_key_value_heads"] = nullptr;  // HF: as many KV heads as query heads
  WriteConfig(dir.path(), json);
  config = LoadModelConfig(dir.path());
  ASSERT_TRUE(config.has_value()) << config.error();
  EXPECT_EQ(config->kv_heads, 4);
}

TEST(LoadModelConfig, RefusesFeaturesThatWouldChangeTheMath) {
  TempDir dir;
  auto json = FixtureConfig();
  json["use_sliding_window"] = true;
  WriteConfig(dir.path(), json);
  auto config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("use_sliding_window"));

  json["use_sliding_window"] = false;
  json["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
  WriteConfig(dir.path(), json);
  config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("rope_scaling"));
}

TEST(LoadModelConfig, ReportsMissingFileAndInvalidJson) {
  TempDir dir;
  auto config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("cannot open " + dir.path() + "/config.json"));
  EXPECT_THAT(config.error(), HasSubstr("No such file"));

  std::ofstream(dir.File("config.json")) << "{\"model_type\": \"qwen2\",";
  config = LoadModelConfig(dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("not valid JSON"));
}

}  // namespace
}  // namespace actex
