// Reading SAE folders as SAELens and sparsify save them, and every refusal.

#include "sae/sae_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "model/kernels/half_float.h"
#include "storage/safetensors.h"
#include "tests/sae/sae_fixtures.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// What each fixture's library wrote in its folder, as LoadSae must read it.
struct SavedSae {
  const char* folder;
  SaeFormat format;
  SaeActivation activation;
  bool subtract_decoder_bias;
  int64_t k;             // 0: not a TopK SAE
  size_t thresholds;     // JumpReLU's, else 0
  size_t latent_scales;  // SAELens topk rescaled by decoder norm, else 0
};

TEST(LoadSae, ReadsEverySavedSaeAsItsLibraryDescribesIt) {
  const SavedSae saved[] = {
      {"saelens-standard", SaeFormat::kSaeLens, SaeActivation::kRelu, true, 0, 0, 0},
      {"saelens-jumprelu", SaeFormat::kSaeLens, SaeActivation::kJumpRelu, false, 0, 256, 0},
      {"saelens-topk", SaeFormat::kSaeLens, SaeActivation::kTopK, true, 16, 0, 256},
      {"sparsify/layers.1/", SaeFormat::kSparsify, SaeActivation::kTopK, true, 16, 0, 0},
  };
  for (const SavedSae& expected : saved) {
    SCOPED_TRACE(expected.folder);
    auto sae = LoadSae(SaeFixture(expected.folder));
    ASSERT_TRUE(sae) << sae.error();
    EXPECT_EQ(sae->format, expected.format);
    EXPECT_EQ(sae->activation, expected.activation);
    EXPECT_EQ(sae->subtract_decoder_bias, expected.subtract_decoder_bias);
    EXPECT_EQ(sae->k, expected.k);
    EXPECT_EQ(sae->threshold.size(), expected.thresholds);
    EXPECT_EQ(sae->latent_scale.size(), expected.latent_scales);
    EXPECT_EQ(sae->d_in, 64);
    EXPECT_EQ(sae->d_sae, 256);
    EXPECT_EQ(sae->encoder_weight.size(), 256u * 64u);
    EXPECT_EQ(sae->encoder_bias.size(), 256u);
    EXPECT_EQ(sae->decoder_bias.size(), 64u);
    EXPECT_EQ(sae->site, "blocks.1.hook_resid_post");
  }
}

TEST(LoadSae, JumpReluThresholdsArePositiveAsSaved) {
  auto sae = LoadSae(SaeFixture("saelens-jumprelu"));
  ASSERT_TRUE(sae) << sae.error();
  for (float threshold : sae->threshold) EXPECT_GT(threshold, 0.0f);
}

TEST(LoadSae, SaeLensTakesTheSiteFromHookNameAndSparsifyFromTheHookpointFolder) {
  auto saelens = LoadSae(SaeFixture("saelens-standard"));
  ASSERT_TRUE(saelens) << saelens.error();
  EXPECT_THAT(saelens->site_source, HasSubstr("metadata.hook_name"));
  auto sparsify = LoadSae(SaeFixture("sparsify/layers.1/"));
  ASSERT_TRUE(sparsify) << sparsify.error();
  EXPECT_THAT(sparsify->site_source, HasSubstr("sparsify hookpoint \"layers.1\""));
}

TEST(LoadSae, SparsifyLatentCountFollowsTheExpansionFactorWhenNumLatentsIsZero) {
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, "sparsify/layers.1");
  EditSaeConfig(dir, [](nlohmann::json& c) { c["num_latents"] = 0, c["expansion_factor"] = 4; });
  auto sae = LoadSae(dir);
  ASSERT_TRUE(sae) << sae.error();
  EXPECT_EQ(sae->d_sae, 256);
  EditSaeConfig(dir, [](nlohmann::json& c) { c["expansion_factor"] = 8; });
  auto wrong = LoadSae(dir);
  ASSERT_FALSE(wrong);
  EXPECT_THAT(wrong.error(), AllOf(HasSubstr("encoder.weight"), HasSubstr("[512, 64]")));
}

// A copy of fixture `name` with `edit` applied to its cfg.json must be refused with a
// message containing every one of `parts`.
void ExpectRefused(const std::string& name, const std::function<void(nlohmann::json&)>& edit,
                   const std::vector<std::string>& parts) {
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, name);
  EditSaeConfig(dir, edit);
  auto sae = LoadSae(dir);
  ASSERT_FALSE(sae) << name << " was accepted";
  for (const std::string& part : parts) EXPECT_THAT(sae.error(), HasSubstr(part));
}

TEST(LoadSae, RefusesAnArchitectureNotImplementedNamingIt) {
  ExpectRefused("saelens-standard", [](nlohmann::json& c) { c["architecture"] = "gated"; },
                {"cfg.json", "architecture \"gated\" is not implemented"});
}

TEST(LoadSae, RefusesEveryInputNormalisationButNoneNamingTheField) {
  for (const char* mode : {"expected_average_only_in", "constant_norm_rescale", "layer_norm",
                           "covariance_whitening"}) {
    ExpectRefused("saelens-standard",
                  [mode](nlohmann::json& c) { c["normalize_activations"] = mode; },
                  {"cfg.json", "normalize_activations", mode, "not implemented"});
  }
}

TEST(LoadSae, RefusesAnUnknownReshapeAndAcceptsHookZ) {
  ExpectRefused("saelens-standard", [](nlohmann::json& c) { c["reshape_activations"] = "hook_q"; },
                {"reshape_activations \"hook_q\""});
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, "saelens-standard");
  EditSaeConfig(dir, [](nlohmann::json& c) { c["reshape_activations"] = "hook_z"; });
  EXPECT_TRUE(LoadSae(dir));
}

TEST(LoadSae, RefusesAMissingOrMistypedField) {
  ExpectRefused("saelens-standard", [](nlohmann::json& c) { c.erase("d_sae"); }, {"d_sae"});
  ExpectRefused("saelens-standard", [](nlohmann::json& c) { c["d_in"] = "64"; }, {"d_in"});
  ExpectRefused("saelens-topk", [](nlohmann::json& c) { c.erase("k"); }, {"cfg.json", "k"});
  ExpectRefused("saelens-standard", [](nlohmann::json& c) { c["metadata"].erase("hook_name"); },
                {"metadata.hook_name", "trained on is unknown"});
}

TEST(LoadSae, ReadsTheTopLevelHookNameOfSaeLens5) {
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, "saelens-standard");
  EditSaeConfig(dir, [](nlohmann::json& c) {
    c.erase("metadata");
    c["hook_name"] = "blocks.3.hook_resid_pre";
  });
  auto sae = LoadSae(dir);
  ASSERT_TRUE(sae) << sae.error();
  EXPECT_EQ(sae->site, "blocks.3.hook_resid_pre");
}

TEST(LoadSae, RefusesAWeightOfAnotherShapeNamingTheTensor) {
  ExpectRefused("saelens-standard", [](nlohmann::json& c) { c["d_sae"] = 128; },
                {"sae_weights.safetensors", "W_enc", "[64, 256]", "[64, 128]"});
}

TEST(LoadSae, RefusesSparsifyGroupMaxTranscodersAndSkipConnections) {
  ExpectRefused("sparsify/layers.1", [](nlohmann::json& c) { c["activation"] = "groupmax"; },
                {"cfg.json", "activation \"groupmax\" is not implemented"});
  ExpectRefused("sparsify/layers.1", [](nlohmann::json& c) { c["transcode"] = true; },
                {"transcode is true"});
  ExpectRefused("sparsify/layers.1", [](nlohmann::json& c) { c["skip_connection"] = true; },
                {"skip_connection is true"});
}

TEST(LoadSae, RefusesASparsifyHookpointWithNoActexSite) {
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, "sparsify/layers.1", "layers.1.mlp");
  auto sae = LoadSae(dir);
  ASSERT_FALSE(sae);
  EXPECT_THAT(sae.error(), AllOf(HasSubstr("\"layers.1.mlp\""), HasSubstr("layers.N")));
}

TEST(LoadSae, NamesTheHookpointsOfASparsifyRunFolder) {
  TempDir temp;
  CopySaeFixture(temp, "sparsify/layers.1", "run/layers.1");
  CopySaeFixture(temp, "sparsify/layers.1", "run/layers.2");
  auto sae = LoadSae(temp.File("run"));
  ASSERT_FALSE(sae);
  EXPECT_THAT(sae.error(), AllOf(HasSubstr("layers.1, layers.2"), HasSubstr("run/layers.1")));
}

TEST(LoadSae, RefusesAFolderWithoutAnSaeOrNotAFolder) {
  TempDir temp;
  auto empty = LoadSae(temp.path());
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error(), AllOf(HasSubstr("holds no SAE"), HasSubstr("sae_weights.safetensors"),
                                   HasSubstr("sae.safetensors")));
  auto missing = LoadSae(temp.File("nowhere"));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error(), HasSubstr("not a directory"));
}

TEST(LoadSae, RefusesAConfigThatIsNotJson) {
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, "saelens-standard");
  WriteBytes(dir + "/cfg.json", "{\"d_in\": 64,");
  auto sae = LoadSae(dir);
  ASSERT_FALSE(sae);
  EXPECT_THAT(sae.error(), AllOf(HasSubstr("cfg.json"), HasSubstr("not valid JSON")));
}

// Rewrites DIR/sae_weights.safetensors with every F32 tensor in `dtype` (BF16 rounded to
// nearest, or I32 by value), as a library saving in another precision would.
void RewriteWeightsAs(const std::string& dir, const std::string& dtype) {
  const std::string path = dir + "/sae_weights.safetensors";
  auto original = SafetensorsFile::Open(SaeFixture("saelens-standard/sae_weights.safetensors"));
  ASSERT_TRUE(original) << original.error();
  std::vector<TensorToWrite> tensors;
  for (const auto& [name, tensor] : (*original)->tensors()) {
    const SafetensorsTensor source = tensor;
    tensors.push_back({name, dtype, source.shape, [source, dtype](std::span<uint8_t> out) {
                         const size_t count = source.bytes.size() / 4;
                         for (size_t i = 0; i < count; ++i) {
                           float value;
                           std::memcpy(&value, source.bytes.data() + i * 4, 4);
                           if (dtype == "BF16") {
                             const uint16_t half = FloatToBfloat16Bits(value);
                             std::memcpy(out.data() + i * 2, &half, 2);
                           } else {
                             const int32_t integer = static_cast<int32_t>(value * 100);
                             std::memcpy(out.data() + i * 4, &integer, 4);
                           }
                         }
                       }});
  }
  auto written = WriteSafetensors(path, tensors, {});
  ASSERT_TRUE(written) << written.error();
}

TEST(LoadSae, WidensBFloat16WeightsExactly) {
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, "saelens-standard");
  RewriteWeightsAs(dir, "BF16");
  auto widened = LoadSae(dir);
  ASSERT_TRUE(widened) << widened.error();
  auto original = LoadSae(SaeFixture("saelens-standard"));
  ASSERT_TRUE(original) << original.error();
  ASSERT_EQ(widened->encoder_weight.size(), original->encoder_weight.size());
  for (size_t i = 0; i < original->encoder_weight.size(); ++i) {
    ASSERT_EQ(widened->encoder_weight[i],
              Bfloat16BitsToFloat(FloatToBfloat16Bits(original->encoder_weight[i])));
  }
}

TEST(LoadSae, RefusesIntegerWeightsNamingTheTensorAndDtype) {
  TempDir temp;
  const std::string dir = CopySaeFixture(temp, "saelens-standard");
  RewriteWeightsAs(dir, "I32");
  auto sae = LoadSae(dir);
  ASSERT_FALSE(sae);
  EXPECT_THAT(sae.error(), AllOf(HasSubstr("sae_weights.safetensors"), HasSubstr("is I32"),
                                 HasSubstr("F32, BF16 or F16")));
}

}  // namespace
}  // namespace actex
