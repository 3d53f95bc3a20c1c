// Parity of the forward pass with HF transformers' Qwen2 (tests/fixtures/qwen2-tiny),
// the attention output before o_proj (z) included,
// for F32 and BF16 weights, 1 to 4 (= heads) shards, single sequences and a packed
// batch of three sequences. Tolerance from the fixture README: per tensor
// max|Δ| <= 2e-5 · max|ref| and <= 1e-4 absolute.

#include <gtest/gtest.h>

#include <cstdio>
#include <tuple>

#include "model/decoder_forward.h"
#include "model/model_weights.h"
#include "model/sites.h"
#include "storage/safetensors.h"
#include "tests/model/family_fixture.h"
#include "tests/model/model_test_util.h"
#include "tests/support/fixture_dirs.h"

namespace actex {
namespace {

using test_support::MaxAbs;
using test_support::MaxAbsDifference;
using test_support::ReadFloats;
using test_support::ReadInts;

// Our site and the fixture tensor (after "<case>.") it must equal: in
// expected.safetensors, or for z ("z.<l>") in z.safetensors (README-z.md).
const std::vector<std::pair<Site, std::string>>& Comparisons() {
  static const auto* comparisons = new std::vector<std::pair<Site, std::string>>{
      {{SiteKind::kEmbed, -1}, "hidden_states.0"},
      {{SiteKind::kZ, 0}, "z.0"},
      {{SiteKind::kResidPre, 1}, "hidden_states.1"},
      {{SiteKind::kZ, 1}, "z.1"},
      {{SiteKind::kResidPost, 0}, "hidden_states.1"},
      {{SiteKind::kResidPost, 1}, "last_layer_pre_norm"},
      {{SiteKind::kLnFinal, -1}, "hidden_states.2"},
  };
  return *comparisons;
}

std::vector<Site> ComparedSites() {
  std::vector<Site> sites;
  for (const auto& [site, name] : Comparisons()) sites.push_back(site);
  return sites;
}

// Checks rows [first_row, first_row + rows) of every capture against
// `<prefix>.<fixture tensor>`.
void ExpectMatchesFixture(const std::vector<SiteActivations>& captures,
                          const SafetensorsFile& expected, const SafetensorsFile& z,
                          const std::string& prefix, int64_t first_row, int64_t rows,
                          const std::string& label) {
  ASSERT_EQ(captures.size(), Comparisons().size());
  for (size_t i = 0; i < captures.size(); ++i) {
    const SiteActivations& capture = captures[i];
    const std::string& name = Comparisons()[i].second;
    const std::vector<float> reference =
        ReadFloats(name.starts_with("z.") ? z : expected, prefix + "." + name);
    ASSERT_EQ(static_cast<int64_t>(reference.size()), rows * capture.width);
    const std::span<const float> ours(capture.values.data() + first_row * capture.width,
                                      rows * capture.width);
    const float difference = MaxAbsDifference(ours, reference);
    const float scale = MaxAbs(reference);
    std::printf("parity %s %s %s: max|d| %.3g  max|d|/max|ref| %.3g\n", label.c_str(),
                prefix.c_str(), capture.site.HookName().c_str(), difference, difference / scale);
    EXPECT_LE(difference, 2e-5f * scale)
        << label << " " << prefix << " " << capture.site.HookName();
    EXPECT_LE(difference, 1e-4f) << label << " " << prefix << " " << capture.site.HookName();
  }
}

class ParityTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ParityTest, SingleSequencesMatchHuggingFace) {
  const auto& [dir, shards] = GetParam();
  auto weights = ModelWeights::Open(dir);
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto expected = SafetensorsFile::Open(dir + "/expected.safetensors");
  ASSERT_TRUE(expected.has_value()) << expected.error();
  auto z = SafetensorsFile::Open(dir + "/z.safetensors");
  ASSERT_TRUE(z.has_value()) << z.error();
  const std::string label = (*weights)->config().torch_dtype + " S=" + std::to_string(shards);
  for (const std::string name : {"len1", "len7", "len33", "len128"}) {
    const PackedBatch batch =
        test_support::SingleSequence(ReadInts(**expected, name + ".input_ids"));
    auto captures = test_support::RunShards(*weights, shards, ComparedSites(), batch);
    ASSERT_EQ(static_cast<int>(captures.size()), shards);
    for (int rank = 0; rank < shards; ++rank) {
      ExpectMatchesFixture(captures[rank], **expected, **z, name, 0,
                           static_cast<int64_t>(batch.token_ids.size()),
                           label + " rank " + std::to_string(rank));
    }
  }
}

TEST_P(ParityTest, PackedBatchMatchesHuggingFacePaddedBatch) {
  const auto& [dir, shards] = GetParam();
  auto weights = ModelWeights::Open(dir);
  ASSERT_TRUE(weights.has_value()) << weights.error();
  auto expected = SafetensorsFile::Open(dir + "/expected.safetensors");
  ASSERT_TRUE(expected.has_value()) << expected.error();
  auto z = SafetensorsFile::Open(dir + "/z.safetensors");
  ASSERT_TRUE(z.has_value()) << z.error();
  const std::vector<int32_t> lengths = ReadInts(**expected, "padbatch.lengths");
  ASSERT_EQ(lengths, (std::vector<int32_t>{5, 17, 40}));
  // The three rows end to end, without their padding.
  const PackedBatch batch = test_support::UnpaddedBatch(**expected);
  auto captures = test_support::RunShards(*weights, shards, ComparedSites(), batch);
  ASSERT_EQ(static_cast<int>(captures.size()), shards);
  const std::string label = (*weights)->config().torch_dtype + " S=" + std::to_string(shards);
  int64_t first = 0;
  for (size_t row = 0; row < lengths.size(); ++row) {
    ExpectMatchesFixture(captures[0], **expected, **z, "padbatch.row" + std::to_string(row), first,
                         lengths[row], label);
    first += lengths[row];
  }
}

INSTANTIATE_TEST_SUITE_P(Qwen2Tiny, ParityTest,
                         ::testing::Combine(::testing::Values(kTinyModelDir,
                                                              test_support::TinyBf16FixtureDir()),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const ::testing::TestParamInfo<ParityTest::ParamType>& info) {
                           const bool bf16 = std::get<0>(info.param).ends_with("model-bf16");
                           return std::string(bf16 ? "Bf16" : "F32") + "Shards" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace actex
