#include "model/model_weights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "model/kernels/half_float.h"
#include "storage/safetensors.h"
#include "tests/model/model_test_util.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A tensor copied out of a fixture file, editable before it is written again.
struct OwnedTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

std::vector<OwnedTensor> ReadAll(const std::string& path) {
  auto file = SafetensorsFile::Open(path);
  EXPECT_TRUE(file.has_value()) << file.error();
  std::vector<OwnedTensor> tensors;
  if (!file) return tensors;
  for (const auto& [name, tensor] : (*file)->tensors()) {
    tensors.push_back(
        {name, tensor.dtype, tensor.shape, {tensor.bytes.begin(), tensor.bytes.end()}});
  }
  return tensors;
}

void WriteAll(const std::string& path, const std::vector<OwnedTensor>& tensors) {
  std::vector<TensorToWrite> to_write;
  for (const OwnedTensor& tensor : tensors) {
    to_write.push_back({tensor.name, tensor.dtype, tensor.shape, [&tensor](std::span<uint8_t> out) {
                          std::memcpy(out.data(), tensor.bytes.data(), out.size());
                        }});
  }
  auto written = WriteSafetensors(path, to_write, {{"format", "pt"}});
  ASSERT_TRUE(written.has_value()) << written.error();
}

// The F32 fixture copied into `dir`, with `edit` applied to its tensors.
void CopyFixtureWith(const std::string& dir,
                     const std::function<void(std::vector<OwnedTensor>&)>& edit) {
  fs::copy_file(kTinyModelDir + "/config.json", dir + "/config.json");
  auto tensors = ReadAll(kTinyModelDir + "/model.safetensors");
  edit(tensors);
  WriteAll(dir + "/model.safetensors", tensors);
}

OwnedTensor* Find(std::vector<OwnedTensor>& tensors, const std::string& name) {
  for (OwnedTensor& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  ADD_FAILURE() << "no " << name;
  return nullptr;
}

void EditConfig(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json config;
  std::ifstream(dir + "/config.json") >> config;
  edit(config);
  std::ofstream(dir + "/config.json", std::ios::trunc) << config.dump(2);
}

TEST(ModelWeights, OpensTheF32FixtureWithViewsIntoTheFile) {
  auto weights = ModelWeights::Open(kTinyModelDir);
  ASSERT_TRUE(weights.has_value()) << weights.error();
  const ModelWeights& w = **weights;
  EXPECT_EQ(w.config().hidden, 64);
  EXPECT_EQ(w.file_bytes(),
            static_cast<int64_t>(fs::file_size(kTinyModelDir + "/model.safetensors")));
  const WeightView q = w.Get("model.layers.1.self_attn.q_proj.weight");
  EXPECT_EQ(q.dtype, WeightDtype::kF32);
  EXPECT_EQ(q.rows, 64);
  EXPECT_EQ(q.cols, 64);
  const WeightView bias = w.Get("model.layers.0.self_attn.k_proj.bias");
  EXPECT_EQ(bias.rows, 1);
  EXPECT_EQ(bias.cols, 32);
  EXPECT_EQ(w.Get("lm_head.weight").data, nullptr);  // tied: never needed
  EXPECT_EQ(w.Get("no.such.tensor").data, nullptr);

  // The view holds the file's own bytes.
  auto file = SafetensorsFile::Open(kTinyModelDir + "/model.safetensors");
  ASSERT_TRUE(file.has_value());
  const auto& expected = (*file)->tensors().at("model.layers.1.self_attn.q_proj.weight").bytes;
  EXPECT_EQ(std::memcmp(q.data, expected.data(), expected.size()), 0);
  EXPECT_EQ(w.fingerprint().size(), 64u);
}

TEST(ModelWeights, KeepsBf16WeightsSixteenBit) {
  auto weights = ModelWeights::Open(test_support::TinyBf16FixtureDir());
  ASSERT_TRUE(weights.has_value()) << weights.error();
  const WeightView embed = (*weights)->Get("model.embed_tokens.weight");
  EXPECT_EQ(embed.dtype, WeightDtype::kBF16);
  EXPECT_EQ(embed.rows, 512);
  EXPECT_EQ(embed.cols, 64);
  EXPECT_LT((*weights)->file_bytes(), 300000);  // half of the F32 file
}

TEST(ModelWeights, FingerprintCoversConfigAndHeaders) {
  auto f32 = ModelWeights::Open(kTinyModelDir);
  auto bf16 = ModelWeights::Open(test_support::TinyBf16FixtureDir());
  ASSERT_TRUE(f32.has_value() && bf16.has_value());
  EXPECT_NE((*f32)->fingerprint(), (*bf16)->fingerprint());

  TempDir dir;
  test_support::CopyFolder(kTinyModelDir, dir.path());
  auto copy = ModelWeights::Open(dir.path());
  ASSERT_TRUE(copy.has_value()) << copy.error();
  EXPECT_EQ((*copy)->fingerprint(), (*f32)->fingerprint());
  EditConfig(dir.path(), [](nlohmann::json& config) { config["_name_or_path"] = "renamed"; });
  auto renamed = ModelWeights::Open(dir.path());
  ASSERT_TRUE(renamed.has_value()) << renamed.error();
  EXPECT_NE((*renamed)->fingerprint(), (*f32)->fingerprint());
}

TEST(ModelWeights, NamesAMissingTensorAndTheFile) {
  TempDir dir;
  CopyFixtureWith(dir.path(), [](std::vector<OwnedTensor>& tensors) {
    std::erase_if(tensors, [](const OwnedTensor& t) {
      return t.name == "model.layers.1.mlp.up_proj.weight";
    });
  });
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.layers.1.mlp.up_proj.weight"));
  EXPECT_THAT(weights.error(), HasSubstr(dir.path() + "/model.safetensors"));
}

TEST(ModelWeights, NamesATensorWithTheWrongShape) {
  TempDir dir;
  CopyFixtureWith(dir.path(), [](std::vector<OwnedTensor>& tensors) {
    OwnedTensor* bias = Find(tensors, "model.layers.0.self_attn.q_proj.bias");
    bias->shape = {32};
    bias->bytes.resize(32 * 4);
  });
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.layers.0.self_attn.q_proj.bias"));
  EXPECT_THAT(weights.error(), HasSubstr("[32]"));
  EXPECT_THAT(weights.error(), HasSubstr("[64]"));
  EXPECT_THAT(weights.error(), HasSubstr(dir.path() + "/model.safetensors"));
}

TEST(ModelWeights, RefusesAConfigThatContradictsTheWeights) {
  TempDir dir;
  test_support::CopyFolder(kTinyModelDir, dir.path());
  EditConfig(dir.path(), [](nlohmann::json& config) { config["intermediate_size"] = 128; });
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.layers.0.mlp.gate_proj.weight"));
  EXPECT_THAT(weights.error(), HasSubstr("intermediate_size 128"));

  EditConfig(dir.path(), [](nlohmann::json& config) {
    config["intermediate_size"] = 176;
    config["vocab_size"] = 1024;
  });
  weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.embed_tokens.weight"));
  EXPECT_THAT(weights.error(), HasSubstr("[512, 64]"));

  EditConfig(dir.path(), [](nlohmann::json& config) {
    config["vocab_size"] = 512;
    config["num_hidden_layers"] = 1;  // the file holds layer 1 too
  });
  weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.layers.1."));
  EXPECT_THAT(weights.error(), HasSubstr("num_hidden_layers 1"));
}

// A typo of 1e9 layers once built a table of every layer's tensor names first
// (std::bad_alloc, an abort); it is refused at the first layer the files lack.
TEST(ModelWeights, AConfigOfFarMoreLayersThanTheFilesHoldIsRefusedNamingBoth) {
  TempDir dir;
  test_support::CopyFolder(kTinyModelDir, dir.path());
  EditConfig(dir.path(), [](nlohmann::json& config) { config["num_hidden_layers"] = 1000000000; });
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("has no tensor model.layers.2.self_attn.q_proj.weight"));
  EXPECT_THAT(weights.error(), HasSubstr("(config.json says num_hidden_layers 1000000000; the "
                                         "files hold layers 0..1)"));
}

TEST(ModelWeights, RefusesMixedDtypes) {
  TempDir dir;
  CopyFixtureWith(dir.path(), [](std::vector<OwnedTensor>& tensors) {
    OwnedTensor* norm = Find(tensors, "model.norm.weight");
    std::vector<uint8_t> halves(norm->bytes.size() / 2);
    for (size_t i = 0; i < halves.size() / 2; ++i) {
      float value;
      std::memcpy(&value, norm->bytes.data() + 4 * i, 4);
      const uint16_t bits = FloatToBfloat16Bits(value);
      std::memcpy(halves.data() + 2 * i, &bits, 2);
    }
    norm->dtype = "BF16";
    norm->bytes = halves;
  });
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.norm.weight"));
  EXPECT_THAT(weights.error(), HasSubstr("one dtype"));
}

TEST(ModelWeights, RefusesATruncatedFileNamingIt) {
  TempDir dir;
  test_support::CopyFolder(kTinyModelDir, dir.path());
  const std::string path = dir.path() + "/model.safetensors";
  fs::resize_file(path, fs::file_size(path) / 2);
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr(path));
}

TEST(ModelWeights, ReportsAFolderWithoutWeights) {
  TempDir dir;
  fs::copy_file(kTinyModelDir + "/config.json", dir.File("config.json"));
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("neither model.safetensors nor"));
}

// Splits the fixture into two files with an index, as HF's sharded checkpoints are.
void WriteShardedFixture(const std::string& dir, nlohmann::json* index) {
  fs::copy_file(kTinyModelDir + "/config.json", dir + "/config.json");
  auto tensors = ReadAll(kTinyModelDir + "/model.safetensors");
  std::vector<OwnedTensor> first, second;
  (*index)["metadata"] = {{"total_size", 0}};
  for (OwnedTensor& tensor : tensors) {
    const bool in_first =
        tensor.name.starts_with("model.layers.0.") || tensor.name == "model.embed_tokens.weight";
    const std::string file =
        in_first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    (*index)["weight_map"][tensor.name] = file;
    (in_first ? first : second).push_back(tensor);
  }
  WriteAll(dir + "/model-00001-of-00002.safetensors", first);
  WriteAll(dir + "/model-00002-of-00002.safetensors", second);
  std::ofstream(dir + "/model.safetensors.index.json") << index->dump(2);
}

TEST(ModelWeights, OpensAShardedCheckpointThroughItsIndex) {
  TempDir dir;
  nlohmann::json index;
  WriteShardedFixture(dir.path(), &index);
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto single = ModelWeights::Open(kTinyModelDir);
  ASSERT_TRUE(single.has_value());
  for (const char* name :
       {"model.embed_tokens.weight", "model.layers.1.mlp.down_proj.weight", "model.norm.weight"}) {
    const WeightView a = (*weights)->Get(name), b = (*single)->Get(name);
    ASSERT_EQ(a.rows, b.rows);
    ASSERT_EQ(a.cols, b.cols);
    EXPECT_EQ(std::memcmp(a.data, b.data, a.rows * a.cols * 4), 0) << name;
  }
  EXPECT_EQ((*weights)->file_bytes(),
            static_cast<int64_t>(fs::file_size(dir.File("model-00001-of-00002.safetensors")) +
                                 fs::file_size(dir.File("model-00002-of-00002.safetensors"))));
}

TEST(ModelWeights, NamesAnIndexEntryWhoseFileIsMissing) {
  TempDir dir;
  nlohmann::json index;
  WriteShardedFixture(dir.path(), &index);
  fs::remove(dir.File("model-00002-of-00002.safetensors"));
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model-00002-of-00002.safetensors"));
}

TEST(ModelWeights, NamesATensorTheIndexMisplaces) {
  TempDir dir;
  nlohmann::json index;
  WriteShardedFixture(dir.path(), &index);
  index["weight_map"]["model.norm.weight"] = "model-00001-of-00002.safetensors";
  std::ofstream(dir.File("model.safetensors.index.json"), std::ios::trunc) << index.dump(2);
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.norm.weight"));
  EXPECT_THAT(weights.error(), HasSubstr("model-00001-of-00002.safetensors"));
}

// An index whose weight_map lists nothing names the index and the first tensor it
// lacks (it once read a first weight file that no entry had named).
TEST(ModelWeights, NamesAnIndexThatListsNoTensor) {
  TempDir dir;
  nlohmann::json index;
  WriteShardedFixture(dir.path(), &index);
  index["weight_map"] = nlohmann::json::object();
  std::ofstream(dir.File("model.safetensors.index.json"), std::ios::trunc) << index.dump(2);
  auto weights = ModelWeights::Open(dir.path());
  ASSERT_FALSE(weights.has_value());
  EXPECT_THAT(weights.error(), HasSubstr("model.safetensors.index.json has no tensor "));
}

}  // namespace
}  // namespace actex
