// ExportForDelphi on a synthetic output whose latents sites the test knows token by
// token: every firing (value > 0) stored latent becomes one location of its range's file,
// at its place in the token stream cut into sequences; the refusals name the cause, and
// an earlier export's range files that this one would leave beside its own are refused.
#include "storage/delphi_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "storage/float_convert.h"
#include "storage/sae_record.h"
#include "storage/safetensors.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSite = "blocks.0.hook_resid_post";
constexpr int kK = 4;
constexpr int kDocuments = 12;

// metadata.json's record of a TopK SAE on kSite of `d_sae` latents.
nlohmann::json SaeOfWidth(int64_t d_sae) {
  return SaeRecordJson({.site = kSite,
                        .dir = "/saes/topk",
                        .format = "saelens",
                        .architecture = "topk",
                        .d_in = 64,
                        .d_sae = d_sae,
                        .k = kK,
                        .files = {{"cfg.json", std::string(64, 'a')}}});
}

// The synthetic output's latents sites of kSite (ids 0..63) and its SAE's record.
SyntheticOutput LatentsOutput(int64_t d_sae) {
  SyntheticOutput spec{.hosts = 1, .documents = kDocuments};
  // Site 0 the ids (ExpertIdValue: 0..63), site 1 their values (ActivationValue).
  spec.sites = {{std::string(kSite) + ".latents.ids", kK, true},
                {std::string(kSite) + ".latents.values", kK},
                {std::string(kSite) + ".latents.count", 1, true}};
  spec.config[kSaesConfigKey] = {SaeOfWidth(d_sae)};
  return spec;
}

class DelphiExport : public testing::Test {
 protected:
  void SetUp() override { WriteSyntheticOutput(dir_.File("out"), LatentsOutput(64)); }
  DelphiExportOptions Options() const {
    DelphiExportOptions options;
    options.source_dir = dir_.File("out");
    options.out_dir = dir_.File("delphi");
    options.ctx_len = 16;
    options.splits = 4;
    return options;
  }
  TempDir dir_;
};

// (stream index, latent, value) of every firing latent, as the synthetic writer made them.
struct Location {
  int64_t token;
  int64_t latent;
  float value;
};
std::vector<Location> ExpectedLocations() {
  std::vector<Location> locations;
  int64_t token = 0;
  for (int64_t doc = 0; doc < kDocuments; ++doc) {
    for (int t = 0; t < SyntheticTokens(doc); ++t, ++token) {
      for (int slot = 0; slot < kK; ++slot) {
        const float value =
            Bfloat16BitsToFloat(FloatToBfloat16Bits(ActivationValue(doc, t, 1, slot)));
        if (value > 0) locations.push_back({token, ExpertIdValue(doc, t, 0, slot), value});
      }
    }
  }
  return locations;
}

TEST_F(DelphiExport, EveryFiringLatentIsOneLocationOfItsRangesFile) {
  auto result = ExportForDelphi(Options());
  ASSERT_TRUE(result.has_value()) << result.error().message;
  const std::vector<Location> expected = ExpectedLocations();
  EXPECT_EQ(result->locations, static_cast<int64_t>(expected.size()));
  EXPECT_EQ(result->files, 4);
  const int64_t tokens = SyntheticRows({.hosts = 1, .documents = kDocuments});
  EXPECT_EQ(result->tokens, tokens);
  EXPECT_EQ(result->sequences, (tokens + 15) / 16);
  std::vector<Location> found;
  for (const auto& [start, end] : {std::pair{0, 15}, {16, 31}, {32, 47}, {48, 63}}) {
    const std::string path = dir_.File("delphi/") + kSite + "/" + std::to_string(start) + "_" +
                             std::to_string(end) + ".safetensors";
    auto file = SafetensorsFile::Open(path);
    ASSERT_TRUE(file.has_value()) << file.error();
    const auto& tensors = (*file)->tensors();
    const SafetensorsTensor& locations = tensors.at("locations");
    const SafetensorsTensor& activations = tensors.at("activations");
    EXPECT_EQ(tensors.at("tokens").shape, (std::vector<int64_t>{result->sequences, 16}));
    ASSERT_EQ(locations.dtype, "I64");
    ASSERT_EQ(activations.dtype, "F32");
    for (int64_t row = 0; row < locations.shape[0]; ++row) {
      int64_t at[3];
      std::memcpy(at, locations.bytes.data() + row * 24, 24);
      float value;
      std::memcpy(&value, activations.bytes.data() + row * 4, 4);
      found.push_back({at[0] * 16 + at[1], at[2] + start, value});
    }
  }
  std::sort(found.begin(), found.end(), [](const Location& a, const Location& b) {
    return std::pair{a.token, a.latent} < std::pair{b.token, b.latent};
  });
  std::vector<Location> sorted = expected;
  std::sort(sorted.begin(), sorted.end(), [](const Location& a, const Location& b) {
    return std::pair{a.token, a.latent} < std::pair{b.token, b.latent};
  });
  ASSERT_EQ(found.size(), sorted.size());
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(found[i].token, sorted[i].token) << i;
    EXPECT_EQ(found[i].latent, sorted[i].latent) << i;
    EXPECT_EQ(found[i].value, sorted[i].value) << i;
  }
  std::ifstream config(dir_.File("delphi/") + kSite + "/config.json");
  const auto json = nlohmann::json::parse(config);
  EXPECT_EQ(json.at("cache_ctx_len"), 16);
  EXPECT_EQ(json.at("n_splits"), 4);
  EXPECT_EQ(json.at("model_name"), "test");
}

TEST(DelphiExportWidth, AStoredIdPastTheSaesWidthIsRefusedNamingIt) {
  TempDir dir;
  WriteSyntheticOutput(dir.File("out"), LatentsOutput(32));
  auto result = ExportForDelphi(
      {.source_dir = dir.File("out"), .out_dir = dir.File("delphi"), .ctx_len = 16, .splits = 4});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("latent 63 is stored but the SAE has 32 latents"));
  EXPECT_EQ(result.error().kind, CommandError::Kind::kStopped);  // the source disagrees with itself
}

TEST_F(DelphiExport, ASiteWithoutLatentsIsRefusedNamingTheSitesThatHaveThem) {
  DelphiExportOptions options = Options();
  options.sites = {"blocks.1.hook_resid_post"};
  auto result = ExportForDelphi(options);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("site blocks.1.hook_resid_post has no latents"));
  EXPECT_EQ(result.error().kind, CommandError::Kind::kRefused);
  EXPECT_THAT(result.error().message, HasSubstr(std::string("sites with latents: ") + kSite));
}

TEST(DelphiExportOfDenseSites, AnOutputWithoutLatentsIsRefusedSayingToUseSae) {
  TempDir dir;
  WriteSyntheticOutput(dir.File("out"), {.hosts = 1, .documents = 3});
  auto result = ExportForDelphi({.source_dir = dir.File("out"), .out_dir = dir.File("delphi")});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("holds no SAE latents"));
  EXPECT_THAT(result.error().message, HasSubstr("--sae"));
}

TEST_F(DelphiExport, OptionsOutOfRangeAreRefusedBeforeAnyFileIsWritten) {
  struct Case {
    int64_t ctx_len = 256, splits = 5;
    int32_t pad_token = 0;
    std::string message;
  };
  const std::vector<Case> cases = {
      {.ctx_len = 0, .message = "--ctx-len must be at least 1"},
      // A [1, 2e9] token tensor would be 16 GB: refused, not a std::bad_alloc.
      {.ctx_len = 2'000'000'000,
       .message = "--ctx-len 2000000000 is above 1048576 tokens a sequence"},
      {.splits = 0, .message = "--splits must be at least 1"},
      {.pad_token = -5, .message = "--pad-token -5 is not a token id"},
  };
  for (const Case& bad : cases) {
    const std::string& message = bad.message;
    DelphiExportOptions options = Options();
    options.ctx_len = bad.ctx_len;
    options.splits = bad.splits;
    options.pad_token = bad.pad_token;
    auto checked = CheckDelphiExportOptions(options);
    ASSERT_FALSE(checked.has_value()) << message;
    EXPECT_EQ(checked.error(), message);
    auto result = ExportForDelphi(options);
    ASSERT_FALSE(result.has_value()) << message;
    EXPECT_EQ(result.error().message, message);
    EXPECT_EQ(result.error().kind, CommandError::Kind::kRefused) << message;
    EXPECT_FALSE(std::filesystem::exists(options.out_dir)) << message;
  }
  EXPECT_TRUE(CheckDelphiExportOptions(Options()).has_value());
}

// delphi's loader reads every .safetensors file of a site's folder: an earlier export's
// ranges (--splits 4 over 64 latents: 0_15 ... 48_63) left beside this one's (--splits 2:
// 0_31, 32_63) would hand it every latent twice. Refused before anything is written;
// the same export again replaces its own files.
TEST_F(DelphiExport, AnEarlierExportsOtherRangesAreRefusedNotLeftBesideThisOnes) {
  ASSERT_TRUE(ExportForDelphi(Options()).has_value());
  const std::string folder = dir_.File("delphi/") + kSite;
  const std::string first_range = ReadBytes(folder + "/0_15.safetensors");
  auto again = ExportForDelphi(Options());
  ASSERT_TRUE(again.has_value()) << again.error().message;
  DelphiExportOptions halves = Options();
  halves.splits = 2;
  auto refused = ExportForDelphi(halves);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, CommandError::Kind::kRefused);
  EXPECT_THAT(refused.error().message, HasSubstr(std::string("holds ") + kSite + "/"));
  EXPECT_THAT(refused.error().message,
              HasSubstr("which this export does not write (--splits 2 over 64 latents writes "
                        "0_31.safetensors to 32_63.safetensors)"));
  EXPECT_FALSE(std::filesystem::exists(folder + "/0_31.safetensors"));
  EXPECT_EQ(ReadBytes(folder + "/0_15.safetensors"), first_range);
}

}  // namespace
}  // namespace actex
