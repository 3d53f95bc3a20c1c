#include "tests/model/family_fixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <span>

#include "tests/model/model_test_util.h"
#include "tests/support/fixture_dirs.h"

namespace actex::test_support {
namespace {

// The comparisons of what a mixture of experts computes before its first routing.
std::vector<std::pair<Site, std::string>> BeforeTheFirstRouting(
    const std::vector<std::pair<Site, std::string>>& comparisons) {
  std::vector<std::pair<Site, std::string>> before;
  for (const auto& comparison : comparisons) {
    const Site& site = comparison.first;
    const bool first_layer_attention =
        site.layer == 0 && (site.kind == SiteKind::kResidPre || site.kind == SiteKind::kZ ||
                            site.kind == SiteKind::kAttnOut || site.kind == SiteKind::kResidMid ||
                            site.kind == SiteKind::kRouterLogits);
    if (site.kind == SiteKind::kEmbed || first_layer_attention) before.push_back(comparison);
  }
  return before;
}

}  // namespace

bool IsMixtureOfExperts(const std::string& family) {
  return family == "mixtral" || family == "qwen2_moe" || family == "qwen3_moe" || family == "olmoe";
}

std::vector<std::string> EveryFamily() {
  return {"qwen2-tiny",  "llama",   "mistral",   "qwen3",     "gemma2", "gpt2",
          "gemma3_text", "mixtral", "qwen2_moe", "qwen3_moe", "olmoe"};
}

std::string FamilyDir(const std::string& family) {
  if (family == "qwen2-tiny") return kTinyModelDir;
  return std::string(ACTEX_FIXTURES_DIR) +
         (IsMixtureOfExperts(family) ? "/moe-families/" : "/model-families/") + family;
}

std::expected<FamilyFiles, std::string> OpenFamilyFiles(const std::string& family) {
  const std::string dir = FamilyDir(family);
  FamilyFiles files;
  auto weights = ModelWeights::Open(dir);
  if (!weights) return std::unexpected(weights.error());
  files.weights = *weights;
  for (auto [path, file] : {std::pair{dir + "/expected.safetensors", &files.expected},
                            std::pair{ZFile(family), &files.z}}) {
    auto opened = SafetensorsFile::Open(path);
    if (!opened) return std::unexpected(path + ": " + opened.error());
    *file = std::move(*opened);
  }
  return files;
}

std::string FamilyTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

std::string ZFile(const std::string& family) {
  return FamilyDir(family) +
         (IsMixtureOfExperts(family) ? "/expected.safetensors" : "/z.safetensors");
}

// Every site of a 4-layer model that `config` has and the fixture tensor (after
// "<case>.") it equals (z: in ZFile). The mixture-of-experts fixtures hold no mlp_post
// (not even of qwen2_moe's dense layer).
std::vector<std::pair<Site, std::string>> Comparisons(const ModelConfig& config,
                                                      const SafetensorsFile* expected,
                                                      const SafetensorsFile* z) {
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
  if (expected == nullptr) return comparisons;
  std::erase_if(comparisons, [&](const auto& comparison) {
    const std::string name = "padbatch.row0." + comparison.second;
    const SafetensorsFile& file = comparison.second.starts_with("z.") ? *z : *expected;
    return file.tensors().find(name) == file.tensors().end();
  });
  return comparisons;
}

std::vector<Site> SitesOf(const std::vector<std::pair<Site, std::string>>& comparisons) {
  std::vector<Site> sites;
  for (const auto& [site, name] : comparisons) sites.push_back(site);
  return sites;
}

std::string KindName(const Site& site) {
  const std::string hook = site.HookName();
  const size_t dot = hook.find('.', hook.starts_with("blocks.") ? 7 : 0);
  return hook.starts_with("blocks.") ? hook.substr(dot + 1) : hook;
}

void ExpectMatchesFixture(const std::vector<SiteActivations>& captures,
                          const std::vector<std::pair<Site, std::string>>& comparisons,
                          const SafetensorsFile& expected, const SafetensorsFile& z,
                          const std::string& prefix, int64_t first_row, int64_t rows,
                          const std::string& label, WorstErrors& worst, float bound,
                          bool routing_must_match) {
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
      if (routing_must_match) {
        EXPECT_EQ(differing, 0) << label << " " << prefix << " " << capture.site.HookName();
      }
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
    EXPECT_LE(difference, bound * scale)
        << label << " " << prefix << " " << capture.site.HookName() << " max|d| " << difference;
    if (capture.site.kind == SiteKind::kExpertWeights) {
      EXPECT_LE(difference, bound);
    }
  }
}

void ExpectEveryCaseMatches(const std::shared_ptr<const ModelWeights>& weights,
                            const SafetensorsFile& expected, const SafetensorsFile& reference,
                            const SafetensorsFile& reference_z,
                            const std::vector<std::pair<Site, std::string>>& comparisons,
                            const ShardDeviceMaker& make_device, int shards, float bound,
                            const std::string& label, WorstErrors& worst, bool routing_must_match) {
  const std::vector<Site> sites = SitesOf(comparisons);
  for (const std::string& name : SingleSequenceCases(expected)) {
    if (reference.tensors().count(name + ".hidden_states.0") == 0) continue;
    const PackedBatch batch = SingleSequence(ReadInts(expected, name + ".input_ids"));
    auto captures = RunShards(weights, shards, sites, batch, make_device);
    ASSERT_EQ(static_cast<int>(captures.size()), shards) << label;
    for (int rank = 0; rank < shards; ++rank) {
      ExpectMatchesFixture(captures[rank], comparisons, reference, reference_z, name, 0,
                           static_cast<int64_t>(batch.token_ids.size()),
                           label + " rank " + std::to_string(rank), worst, bound,
                           routing_must_match);
    }
  }
  if (reference.tensors().count("padbatch.row0.hidden_states.0") == 0) return;
  const PackedBatch packed = UnpaddedBatch(expected);
  auto captures = RunShards(weights, shards, sites, packed, make_device);
  ASSERT_EQ(static_cast<int>(captures.size()), shards) << label;
  int64_t first = 0;
  for (size_t row = 0; row < packed.sequence_lengths.size(); ++row) {
    ExpectMatchesFixture(captures[0], comparisons, reference, reference_z,
                         "padbatch.row" + std::to_string(row), first, packed.sequence_lengths[row],
                         label, worst, bound, routing_must_match);
    first += packed.sequence_lengths[row];
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

std::vector<std::string> SingleSequenceCases(const SafetensorsFile& expected) {
  std::vector<std::string> cases;
  for (const auto& [name, tensor] : expected.tensors()) {
    if (name.ends_with(".input_ids") && !name.starts_with("padbatch.")) {
      cases.push_back(name.substr(0, name.size() - std::string(".input_ids").size()));
    }
  }
  return cases;
}

PackedBatch UnpaddedBatch(const SafetensorsFile& expected) {
  const std::vector<int32_t> padded = ReadInts(expected, "padbatch.input_ids");
  const std::vector<int32_t> lengths = ReadInts(expected, "padbatch.lengths");
  const int64_t width = static_cast<int64_t>(padded.size() / lengths.size());
  PackedBatch packed;
  for (size_t row = 0; row < lengths.size(); ++row) {
    for (int32_t t = 0; t < lengths[row]; ++t) {
      packed.token_ids.push_back(padded[row * width + t]);
      packed.positions.push_back(t);
    }
    packed.sequence_lengths.push_back(lengths[row]);
  }
  return packed;
}

void ExpectBf16WithinBounds(const std::string& family, const FamilyFiles& files,
                            const std::vector<std::pair<Site, std::string>>& comparisons,
                            const ShardDeviceMaker& make_device, int shards,
                            const std::string& label, WorstErrors& worst,
                            WorstErrors& before_routing) {
  const bool moe = IsMixtureOfExperts(family);
  ExpectEveryCaseMatches(files.weights, *files.expected, *files.expected, *files.z, comparisons,
                         make_device, shards, moe ? kBf16MoeBound : kBf16DenseBound, label, worst,
                         /*routing_must_match=*/false);
  if (!moe) return;
  ExpectEveryCaseMatches(files.weights, *files.expected, *files.expected, *files.z,
                         BeforeTheFirstRouting(comparisons), make_device, shards, kBf16DenseBound,
                         label + " before routing", before_routing);
}

}  // namespace actex::test_support
