// `actex extract --sae` end to end: the binary as users run it on tests/fixtures/qwen2-tiny
// with the SAE fixtures (tests/fixtures/sae, trained on blocks.1.hook_resid_post), the
// stored latents read back and compared with a float32 encoding of the dense activations
// of the same run; the refusals before any work; verify's latent checks.

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "sae/sae_encoder.h"
#include "sae/sae_loader.h"
#include "sae_run.h"
#include "storage/latent_sites.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

class SaeExtractTest : public ::testing::TestWithParam<std::string> {};

// Stored latents equal the SAE's float32 encoding of the stored dense rows: ids
// identical except where two values tie within 1e-6 of their size, values within 1e-5
// of the token's largest.
TEST_P(SaeExtractTest, StoredLatentsEqualAnEncodingOfTheDenseSiteOfTheSameRun) {
  TempDir dir;
  ActexOutcome run = ExtractWithSae(dir, 12, "resid_post", GetParam());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto sae = LoadSae(SaeFixtureDir(GetParam()));
  ASSERT_TRUE(sae) << sae.error();
  SaeEncoder encoder(*sae, kSaeTopK);
  const LatentSiteNames names = LatentSiteNamesOf(kSaeSite);
  const auto documents = ReadJob(dir.path() + "/out");
  ASSERT_EQ(documents.size(), 12u);
  int64_t tokens_compared = 0, ties = 0;
  for (const auto& [doc, rows] : documents) {
    const std::vector<float>& dense = rows.sites.at(kSaeSite);
    const int64_t tokens = static_cast<int64_t>(rows.token_ids.size());
    SaeLatents expected;
    encoder.EncodeTopK(dense.data(), sae->d_in, tokens, &expected);
    const int64_t k = encoder.k();
    const std::vector<int32_t>& ids = rows.integer_sites.at(names.ids);
    const std::vector<float>& values = rows.sites.at(names.values);
    const std::vector<int32_t>& counts = rows.integer_sites.at(names.count);
    ASSERT_EQ(ids.size(), static_cast<size_t>(tokens * k));
    for (int64_t t = 0; t < tokens; ++t) {
      EXPECT_EQ(counts[t], expected.counts[t]) << "doc " << doc << " token " << t;
      const float largest = std::max(std::fabs(expected.values[t * k]), 1e-30f);
      for (int64_t i = 0; i < k; ++i) {
        const size_t at = static_cast<size_t>(t * k + i);
        EXPECT_LE(std::fabs(values[at] - expected.values[at]), 1e-5f * largest)
            << "doc " << doc << " token " << t << " entry " << i;
        if (ids[at] == expected.ids[at]) continue;
        // A swap is allowed only between two values equal within 1e-6 of their size.
        const bool tie = i + 1 < k && std::fabs(expected.values[at] - expected.values[at + 1]) <=
                                          1e-6f * std::fabs(expected.values[at]);
        ties += tie;
        EXPECT_TRUE(tie) << "doc " << doc << " token " << t << " entry " << i << ": id " << ids[at]
                         << ", expected " << expected.ids[at];
      }
    }
    tokens_compared += tokens;
  }
  std::printf("sae %s: %lld tokens compared, %lld tied ids swapped\n", GetParam().c_str(),
              static_cast<long long>(tokens_compared), static_cast<long long>(ties));
  ActexOutcome verify = RunActex(dir.path() + "/verify", {"verify", dir.path() + "/out"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

INSTANTIATE_TEST_SUITE_P(EveryFixtureSae, SaeExtractTest,
                         ::testing::Values("saelens-standard", "saelens-jumprelu", "saelens-topk",
                                           "sparsify/layers.1"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace_if(
                               name.begin(), name.end(), [](char c) { return !std::isalnum(c); },
                               '_');
                           return name;
                         });

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SaeExtract, ADenseSiteLeftOutOfSitesIsNotWrittenButHasItsStatistics) {
  TempDir dir;
  ActexOutcome run = ExtractWithSae(dir, 4, "mlp_out", "saelens-standard");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto documents = ReadJob(dir.path() + "/out");
  ASSERT_EQ(documents.size(), 4u);
  EXPECT_FALSE(documents.begin()->second.sites.contains(kSaeSite));
  EXPECT_TRUE(documents.begin()->second.sites.contains("blocks.1.hook_mlp_out"));
  EXPECT_TRUE(documents.begin()->second.integer_sites.contains(kSaeSite + ".latents.ids"));
  const auto metadata = nlohmann::json::parse(ReadText(dir.path() + "/out/host_00/metadata.json"));
  EXPECT_TRUE(metadata["statistics"].contains(kSaeSite)) << metadata["statistics"].dump();
  for (const auto& site : metadata["sites"]) EXPECT_NE(site["name"], kSaeSite);
  EXPECT_EQ(metadata["config"]["sites"], nlohmann::json::array({"blocks.1.hook_mlp_out"}));
  ActexOutcome verify = RunActex(dir.path() + "/verify", {"verify", dir.path() + "/out"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  ActexOutcome inspect = RunActex(dir.path() + "/inspect", {"inspect", dir.path() + "/out"});
  EXPECT_NE(inspect.out.find("sae " + kSaeSite + ": SAELens relu 64 -> 256, K 8"),
            std::string::npos)
      << inspect.out;
}

TEST(SaeExtract, AnSaeOfAnotherLayerIsRefusedNamingBothSites) {
  TempDir dir;
  dir.Write("c.jsonl", PreTokenizedCorpus(2));
  std::vector<std::string> args =
      SaeExtractArgs(dir, "resid_post", "resid_post=" + SaeFixtureDir("saelens-standard"));
  *std::find(args.begin(), args.end(), "1") = "0";  // --layers 0
  ActexOutcome run = RunActex(dir.path() + "/run", args);
  // Refused as a bad --model folder is, before any work (a usage error): nothing is written.
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out/host_00/metadata.json"));
  EXPECT_NE(run.err.find("--sae blocks.0.hook_resid_post="), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(kSaeSite), std::string::npos) << run.err;
}

TEST(SaeExtract, AnEntryWithoutAFolderIsRefused) {
  TempDir dir;
  dir.Write("c.jsonl", PreTokenizedCorpus(2));
  ActexOutcome run = RunActex(dir.path() + "/run", SaeExtractArgs(dir, "resid_post", kSaeSite));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("is not SITE=DIR"), std::string::npos) << run.err;
}

TEST(SaeExtract, AResumeWithAnotherSaeIsRefusedNamingIt) {
  TempDir dir;
  ASSERT_EQ(ExtractWithSae(dir, 2, "resid_post", "saelens-standard").exit_code, 0);
  ActexOutcome again = ExtractWithSae(dir, 2, "resid_post", "saelens-jumprelu");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("--sae: "), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("jumprelu"), std::string::npos) << again.err;
}

// The bytes of a shard file, gunzipped when `gzip`; and written back the same way.
std::string ReadShardBytes(const std::string& path, bool gzip) {
  if (!gzip) return ReadText(path);
  gzFile file = gzopen(path.c_str(), "rb");
  std::string bytes;
  char buffer[1 << 16];
  for (int got; (got = gzread(file, buffer, sizeof(buffer))) > 0;) bytes.append(buffer, got);
  gzclose(file);
  return bytes;
}

void WriteShardBytes(const std::string& path, const std::string& bytes, bool gzip) {
  if (!gzip) {
    std::ofstream(path, std::ios::binary) << bytes;
    return;
  }
  gzFile file = gzopen(path.c_str(), "wb");
  gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(file);
}

class SaeVerifyTest : public ::testing::TestWithParam<bool> {};

TEST_P(SaeVerifyTest, VerifyNamesTheShardSiteAndRowOfABadLatentId) {
  const bool gzip = GetParam();
  TempDir dir;
  dir.Write("c.jsonl", PreTokenizedCorpus(2));
  std::vector<std::string> args =
      SaeExtractArgs(dir, "resid_post", kSaeSite + "=" + SaeFixtureDir("saelens-standard"));
  args.insert(args.end(), {"--compress", gzip ? "gzip" : "none"});
  ASSERT_EQ(RunActex(dir.path() + "/run", args).exit_code, 0);
  // The first id of the first row becomes 256, one past the SAE's 256 latents.
  const std::string shard =
      dir.path() + "/out/host_00/shard_000001.safetensors" + (gzip ? ".gz" : "");
  std::string bytes = ReadShardBytes(shard, gzip);
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes.data(), sizeof(header_bytes));
  const auto offsets = nlohmann::json::parse(
      bytes.substr(8, header_bytes))[kSaeSite + ".latents.ids"]["data_offsets"];
  const int32_t bad = 256;
  std::memcpy(bytes.data() + 8 + header_bytes + offsets[0].get<uint64_t>(), &bad, sizeof(bad));
  WriteShardBytes(shard, bytes, gzip);
  ActexOutcome verify = RunActex(dir.path() + "/verify", {"verify", dir.path() + "/out"});
  EXPECT_NE(verify.exit_code, 0);
  const std::string said = verify.out + verify.err;
  EXPECT_NE(said.find("shard_000001.safetensors"), std::string::npos) << said;
  EXPECT_NE(said.find("site " + kSaeSite +
                      " latents: row 0 (doc 0, position 0): entry 0: id 256 "
                      "is outside [0, 256)"),
            std::string::npos)
      << said;
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, SaeVerifyTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "gzip" : "plain"; });

}  // namespace
}  // namespace actex
