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
#include <map>
#include <tuple>

#include "model/decoder_forward.h"
#include "model/kernels/half_float.h"
#include "model/model_weights.h"
#include "model/sites.h"
#include "storage/safetensors.h"
#include "tests/model/model_test_util.h"

namespace actex {
namespace {

using testing::MaxAbs;
using testing::MaxAbsDifference;
using testing::ReadFloats;
using testing::ReadInts;

bool IsMixtureOfExperts(const std::string& family) {
  return family == "mixtral" || family == "qwen2_moe" || family == "qwen3_moe" || family == "olmoe";
}

std::string FamilyDir(const std::string& family) {
  return std::string(ACTEX_FIXTURES_DIR) +
         (IsMixtureOfExperts(family) ? "/moe-families/" : "/model-families/") + family;
}

// The mixture-of-experts fixtures hold z in expected.safetensors; the dense ones in
// z.safetensors next to it (README-z.md).
std::string ZFile(const std::string& family) {
  return FamilyDir(family) +
         (IsMixtureOfExperts(family) ? "/expected.safetensors" : "/z.safetensors");
}

// Every site of a 4-layer model that `config` has and the fixture tensor (after
// "<case>.") it equals (z: in ZFile). The mixture-of-experts fixtures hold no mlp_post
// (not even of qwen2_moe's dense layer).
std::vector<std::pair<Site, std::string>> Comparisons(const ModelConfig& config) {
  const int layers = config.layers;
  std::vector<std::pair<Site, std::string>> comparisons = {
      {{SiteKind::kEmbed, -1}, "hidden_states.0"}};
  for (int l = 0; l < layers; ++l) {
    const std::string n = std::to_string(l);
    comparisons.push_back({{SiteKind::kResidPre, l}, "hidden_states." + n});
    comparisons.push_back({{SiteKind::kZ, l}, "z." + n});
    comparisons.push_back({{SiteKind::kAttnOut, l}, "attn_out." + n});
    comparisons.push_back({{SiteKind::kResidMid, l}, "resid_mid." + n});
    if (config.IsSparse(l)) {
      comparisons.push_back({{SiteKind::kRouterLogits, l}, "router_logits." + n});
      comparisons.push_back({{SiteKind::kExpertIds, l}, "expert_ids." + n});
      comparisons.push_back({{SiteKind::kExpertWeights, l}, "expert_weights." + n});
    } else if (config.moe.experts == 0) {
      comparisons.push_back({{SiteKind::kMlpPost, l}, "mlp_post." + n});
    }
    comparisons.push_back({{SiteKind::kMlpOut, l}, "mlp_out." + n});
    comparisons.push_back({{SiteKind::kResidPost, l},
                           l + 1 < layers ? "hidden_states." + std::to_string(l + 1)
                                          : std::string("last_layer_pre_norm")});
  }
  comparisons.push_back({{SiteKind::kLnFinal, -1}, "hidden_states." + std::to_string(layers)});
  return comparisons;
}

std::vector<Site> SitesOf(const std::vector<std::pair<Site, std::string>>& comparisons) {
  std::vector<Site> sites;
  for (const auto& [site, name] : comparisons) sites.push_back(site);
  return sites;
}

// The worst relative error per site kind over a whole test, printed at its end.
using WorstErrors = std::map<std::string, float>;

std::string KindName(const Site& site) {
  const std::string hook = site.HookName();
  const size_t dot = hook.find('.', hook.starts_with("blocks.") ? 7 : 0);
  return hook.starts_with("blocks.") ? hook.substr(dot + 1) : hook;
}

void ExpectMatchesFixture(const std::vector<SiteActivations>& captures,
                          const std::vector<std::pair<Site, std::string>>& comparisons,
                          const SafetensorsFile& expected, const SafetensorsFile& z,
                          const std::string& prefix, int64_t first_row, int64_t rows,
                          const std::string& label, WorstErrors& worst) {
  ASSERT_EQ(captures.size(), comparisons.size());
  for (size_t i = 0; i < captures.size(); ++i) {
    const SiteActivations& capture = captures[i];
    const std::string& name = comparisons[i].second;
    if (capture.site.IsInteger()) {  // expert_ids: the same experts in the same order
      const std::vector<int32_t> reference = ReadInts(expected, prefix + "." + name);
      ASSERT_EQ(static_cast<int64_t>(reference.size()), rows * capture.width) << prefix << name;
      const std::vector<int32_t> ours(
          capture.integers.begin() + first_row * capture.width,
          capture.integers.begin() + (first_row + rows) * capture.width);
      int64_t differing = 0;
      for (size_t j = 0; j < ours.size(); ++j) differing += ours[j] != reference[j];
      float& kind_worst = worst[KindName(capture.site) + " (differing)"];
      kind_worst = std::max(kind_worst, static_cast<float>(differing));
      EXPECT_EQ(differing, 0) << label << " " << prefix << " " << capture.site.HookName();
      continue;
    }
    const std::vector<float> reference =
        ReadFloats(name.starts_with("z.") ? z : expected, prefix + "." + name);
    ASSERT_EQ(static_cast<int64_t>(reference.size()), rows * capture.width)
        << prefix << "." << comparisons[i].second;
    const std::span<const float> ours(capture.values.data() + first_row * capture.width,
                                      rows * capture.width);
    const float difference = MaxAbsDifference(ours, reference);
    const float scale = MaxAbs(reference);
    float& kind_worst = worst[KindName(capture.site)];
    kind_worst = std::max(kind_worst, difference / scale);
    EXPECT_LE(difference, 2e-5f * scale)
        << label << " " << prefix << " " << capture.site.HookName() << " max|d| " << difference;
    if (capture.site.kind == SiteKind::kExpertWeights) EXPECT_LE(difference, 2e-5f);
  }
}

void PrintWorst(const std::string& label, const WorstErrors& worst) {
  std::string line = "parity " + label + " max|d|/max|ref|:";
  for (const auto& [kind, error] : worst) {
    char cell[96];
    std::snprintf(cell, sizeof(cell), " %s %.2g", kind.c_str(), error);
    line += cell;
  }
  std::printf("%s\n", line.c_str());
}

class FamilyParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyParityTest, EveryShardCountMatchesHuggingFaceAtEverySite) {
  const std::string dir = FamilyDir(GetParam());
  auto weights = ModelWeights::Open(dir);
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto expected = SafetensorsFile::Open(dir + "/expected.safetensors");
  ASSERT_TRUE(expected.has_value()) << expected.error();
  auto z = SafetensorsFile::Open(ZFile(GetParam()));
  ASSERT_TRUE(z.has_value()) << z.error();
  const ModelConfig& config = (*weights)->config();
  const auto comparisons = Comparisons(config);
  const std::vector<Site> sites = SitesOf(comparisons);

  // The padded batch's rows end to end, without their padding.
  const std::vector<int32_t> padded = ReadInts(**expected, "padbatch.input_ids");
  const std::vector<int32_t> lengths = ReadInts(**expected, "padbatch.lengths");
  const int64_t width = static_cast<int64_t>(padded.size() / lengths.size());
  PackedBatch packed;
  for (size_t row = 0; row < lengths.size(); ++row) {
    for (int32_t t = 0; t < lengths[row]; ++t) {
      packed.token_ids.push_back(padded[row * width + t]);
      packed.positions.push_back(t);
    }
    packed.sequence_lengths.push_back(lengths[row]);
  }

  WorstErrors worst;
  for (int shards = 1; shards <= config.heads; ++shards) {
    const std::string label = GetParam() + " S=" + std::to_string(shards);
    for (const std::string name : {"len1", "len7", "len33", "len128"}) {
      const PackedBatch batch = testing::SingleSequence(ReadInts(**expected, name + ".input_ids"));
      auto captures = testing::RunShards(*weights, shards, sites, batch);
      ASSERT_EQ(static_cast<int>(captures.size()), shards);
      for (int rank = 0; rank < shards; ++rank) {
        ExpectMatchesFixture(captures[rank], comparisons, **expected, **z, name, 0,
                             static_cast<int64_t>(batch.token_ids.size()),
                             label + " rank " + std::to_string(rank), worst);
      }
    }
    auto captures = testing::RunShards(*weights, shards, sites, packed);
    ASSERT_EQ(static_cast<int>(captures.size()), shards);
    int64_t first = 0;
    for (size_t row = 0; row < lengths.size(); ++row) {
      ExpectMatchesFixture(captures[0], comparisons, **expected, **z,
                           "padbatch.row" + std::to_string(row), first, lengths[row], label, worst);
      first += lengths[row];
    }
  }
  PrintWorst(GetParam() + " F32 S=1.." + std::to_string(config.heads), worst);
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
      bits[i] = bf16 ? FloatToBFloat16(value) : FloatToFloat16(value);
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
    testing::TempDir half_dir, wide_dir;
    WriteHalfAndWidened(GetParam(), dtype, half_dir.path(), wide_dir.path());
    auto half = ModelWeights::Open(half_dir.path());
    ASSERT_TRUE(half.has_value()) << half.error();
    auto wide = ModelWeights::Open(wide_dir.path());
    ASSERT_TRUE(wide.has_value()) << wide.error();
    const ModelConfig& config = (*half)->config();
    const std::vector<Site> sites = SitesOf(Comparisons(config));
    auto expected = SafetensorsFile::Open(FamilyDir(GetParam()) + "/expected.safetensors");
    ASSERT_TRUE(expected.has_value());
    const PackedBatch batch = testing::SingleSequence(ReadInts(**expected, "len33.input_ids"));
    float worst = 0.0f;
    for (int shards : {1, config.heads}) {
      const auto reference = testing::RunShards(*wide, shards, sites, batch);
      const auto actual = testing::RunShards(*half, shards, sites, batch);
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
