// Parity of the forward pass with HF transformers 4.51 for every family in
// tests/fixtures/model-families (llama, mistral, qwen3, gemma2, gpt2, gemma3_text) and
// tests/fixtures/moe-families (mixtral, qwen2_moe, qwen3_moe, olmoe), at every site of
// every layer the fixture holds, for 1 to heads shards (uneven splits, key/value heads
// replicated past kv_heads), single sequences and the packed batch. Tolerance from the
// fixture READMEs: per tensor max|Δ| <= 2e-5 · max|ref|; the routing (expert_ids)
// exactly equal, positionally. 16-bit weights: the fixtures are F32 only, so BF16 and
// F16 copies of each model must give the forward of their widened values, which the F32
// parity then covers. Measured errors are printed.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "model/decoder_forward.h"
#include "model/kernels/half_float.h"
#include "model/model_weights.h"
#include "model/sites.h"
#include "storage/safetensors.h"
#include "tests/model/family_fixture.h"
#include "tests/model/model_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using test_support::Comparisons;
using test_support::FamilyDir;
using test_support::MaxAbs;
using test_support::MaxAbsDifference;
using test_support::ReadInts;
using test_support::SitesOf;
using test_support::WorstErrors;

class FamilyParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyParityTest, EveryShardCountMatchesHuggingFaceAtEverySite) {
  const std::string dir = FamilyDir(GetParam());
  auto weights = ModelWeights::Open(dir);
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto expected = SafetensorsFile::Open(dir + "/expected.safetensors");
  ASSERT_TRUE(expected.has_value()) << expected.error();
  auto z = SafetensorsFile::Open(test_support::ZFile(GetParam()));
  ASSERT_TRUE(z.has_value()) << z.error();
  const ModelConfig& config = (*weights)->config();
  const auto comparisons = Comparisons(config);
  const std::vector<Site> sites = SitesOf(comparisons);

  const PackedBatch packed = test_support::UnpaddedBatch(**expected);
  const std::vector<int32_t> lengths = ReadInts(**expected, "padbatch.lengths");

  WorstErrors worst;
  for (int shards = 1; shards <= config.heads; ++shards) {
    const std::string label = GetParam() + " S=" + std::to_string(shards);
    for (const std::string name : {"len1", "len7", "len33", "len128"}) {
      const PackedBatch batch =
          test_support::SingleSequence(ReadInts(**expected, name + ".input_ids"));
      auto captures = test_support::RunShards(*weights, shards, sites, batch);
      ASSERT_EQ(static_cast<int>(captures.size()), shards);
      for (int rank = 0; rank < shards; ++rank) {
        test_support::ExpectMatchesFixture(captures[rank], comparisons, **expected, **z, name, 0,
                                           static_cast<int64_t>(batch.token_ids.size()),
                                           label + " rank " + std::to_string(rank), worst);
      }
    }
    auto captures = test_support::RunShards(*weights, shards, sites, packed);
    ASSERT_EQ(static_cast<int>(captures.size()), shards);
    int64_t first = 0;
    for (size_t row = 0; row < lengths.size(); ++row) {
      test_support::ExpectMatchesFixture(captures[0], comparisons, **expected, **z,
                                         "padbatch.row" + std::to_string(row), first, lengths[row],
                                         label, worst);
      first += lengths[row];
    }
  }
  test_support::PrintWorst(GetParam() + " F32 S=1.." + std::to_string(config.heads), worst);
}

// Writes the fixture's weights as `dtype` ("BF16" or "F16") into `half_dir` and their
// exactly widened values as F32 into `wide_dir`, each with the config.
void WriteHalfAndWidened(const std::string& family, const std::string& dtype,
                         const std::string& half_dir, const std::string& wide_dir) {
  auto source = SafetensorsFile::Open(FamilyDir(family) + "/model.safetensors");
  ASSERT_TRUE(source.has_value()) << source.error();
  const bool bf16 = dtype == "BF16";
  std::vector<TensorToWrite> half, wide;
  std::vector<std::vector<uint16_t>> halves;
  halves.reserve((*source)->tensors().size());
  for (const auto& [name, tensor] : (*source)->tensors()) {
    ASSERT_EQ(tensor.dtype, "F32");
    const size_t count = tensor.bytes.size() / 4;
    std::vector<uint16_t>& bits = halves.emplace_back(count);
    for (size_t i = 0; i < count; ++i) {
      float value;
      std::memcpy(&value, tensor.bytes.data() + 4 * i, 4);
      bits[i] = bf16 ? FloatToBfloat16Bits(value) : FloatToFloat16(value);
    }
    const uint16_t* data = bits.data();
    half.push_back({name, dtype, tensor.shape, [data, count](std::span<uint8_t> out) {
                      std::memcpy(out.data(), data, count * 2);
                    }});
    const WeightDtype kind = bf16 ? WeightDtype::kBF16 : WeightDtype::kF16;
    wide.push_back({name, "F32", tensor.shape, [data, count, kind](std::span<uint8_t> out) {
                      WidenToFloat(data, kind, static_cast<int64_t>(count),
                                   reinterpret_cast<float*>(out.data()));
                    }});
  }
  ASSERT_TRUE(WriteSafetensors(half_dir + "/model.safetensors", half, {}).has_value());
  ASSERT_TRUE(WriteSafetensors(wide_dir + "/model.safetensors", wide, {}).has_value());
  for (const std::string& dir : {half_dir, wide_dir}) {
    std::filesystem::copy_file(FamilyDir(family) + "/config.json", dir + "/config.json");
  }
}

TEST_P(FamilyParityTest, SixteenBitWeightsGiveTheForwardOfTheirWidenedValues) {
  for (const std::string dtype : {"BF16", "F16"}) {
    TempDir half_dir, wide_dir;
    WriteHalfAndWidened(GetParam(), dtype, half_dir.path(), wide_dir.path());
    auto half = ModelWeights::Open(half_dir.path());
    ASSERT_TRUE(half.has_value()) << half.error();
    auto wide = ModelWeights::Open(wide_dir.path());
    ASSERT_TRUE(wide.has_value()) << wide.error();
    const ModelConfig& config = (*half)->config();
    const std::vector<Site> sites = SitesOf(Comparisons(config));
    auto expected = SafetensorsFile::Open(FamilyDir(GetParam()) + "/expected.safetensors");
    ASSERT_TRUE(expected.has_value());
    const PackedBatch batch = test_support::SingleSequence(ReadInts(**expected, "len33.input_ids"));
    float worst = 0.0f;
    for (int shards : {1, config.heads}) {
      const auto reference = test_support::RunShards(*wide, shards, sites, batch);
      const auto actual = test_support::RunShards(*half, shards, sites, batch);
      for (size_t i = 0; i < sites.size(); ++i) {
        if (sites[i].IsInteger()) {
          EXPECT_EQ(actual[0][i].integers, reference[0][i].integers)
              << dtype << " S=" << shards << " " << sites[i].HookName();
          continue;
        }
        const float difference = MaxAbsDifference(actual[0][i].values, reference[0][i].values);
        const float scale = MaxAbs(reference[0][i].values);
        worst = std::max(worst, difference / scale);
        EXPECT_LE(difference, 2e-5f * scale)
            << dtype << " S=" << shards << " " << sites[i].HookName();
      }
    }
    std::printf("parity %s %s vs widened F32: max|d|/max|ref| %.2g\n", GetParam().c_str(),
                dtype.c_str(), worst);
  }
}

INSTANTIATE_TEST_SUITE_P(ModelFamilies, FamilyParityTest,
                         ::testing::Values("llama", "mistral", "qwen3", "gemma2", "gpt2",
                                           "gemma3_text", "mixtral", "qwen2_moe", "qwen3_moe",
                                           "olmoe"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace actex
