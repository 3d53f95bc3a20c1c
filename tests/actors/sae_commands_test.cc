// What reads an `actex extract --sae` run's output, run as users run it: the
// latents.safetensors the run writes at its end (the same bits `actex inspect --latents`
// writes), `actex latents` printing a latent's strongest examples as the shards hold
// them, and `actex export --format delphi` writing every firing latent; their refusals
// with the exit status each documents.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "base/whole_file.h"
#include "sae_run.h"
#include "storage/job_latents.h"
#include "storage/latent_examples.h"
#include "storage/latent_sites.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

// A byte-level BPE tokenizer of 3256 ids: it decodes the corpus's ids 0..511.
const std::string kTokenizer = std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/bpe-qwen2-style";

// Where a latent fired (value > 0) in the shards, read back as users would.
struct Firing {
  float value;
  int64_t doc_id;
  int32_t position;
};

// Every firing of `latent` at kSaeSite in OUT, strongest first, ties by doc id then
// position (the order latent examples keep).
std::vector<Firing> FiringsOf(const std::string& out, int32_t latent) {
  const LatentSiteNames names = LatentSiteNamesOf(kSaeSite);
  std::vector<Firing> firings;
  for (const auto& [doc, rows] : ReadJob(out)) {
    const std::vector<int32_t>& ids = rows.integer_sites.at(names.ids);
    const std::vector<float>& values = rows.sites.at(names.values);
    const size_t k = ids.size() / rows.positions.size();  // a TopK SAE keeps its own k
    for (size_t at = 0; at < ids.size(); ++at) {
      if (ids[at] == latent && values[at] > 0) {
        firings.push_back({values[at], doc, rows.positions[at / k]});
      }
    }
  }
  std::sort(firings.begin(), firings.end(), [](const Firing& a, const Firing& b) {
    if (a.value != b.value) return a.value > b.value;
    return a.doc_id != b.doc_id ? a.doc_id < b.doc_id : a.position < b.position;
  });
  return firings;
}

// How many stored latents fired (value > 0) over every token of OUT.
int64_t FiringEntries(const std::string& out) {
  const LatentSiteNames names = LatentSiteNamesOf(kSaeSite);
  int64_t entries = 0;
  for (const auto& [doc, rows] : ReadJob(out)) {
    const std::vector<int32_t>& ids = rows.integer_sites.at(names.ids);
    const std::vector<float>& values = rows.sites.at(names.values);
    for (size_t at = 0; at < ids.size(); ++at) entries += ids[at] >= 0 && values[at] > 0;
  }
  return entries;
}

class SaeRunOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    ActexOutcome run = ExtractWithSae(dir_, 12, "resid_post", "saelens-topk");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    run_log_ = run.out + run.err;
  }
  std::string Out() const { return dir_.path() + "/out"; }
  std::string LatentsFile() const { return Out() + "/" + kJobLatentsFile; }
  TempDir dir_;
  std::string run_log_;
};

TEST_F(SaeRunOutput, TheRunEndsWithTheJobsLatentsAsInspectWritesThemAndVerifyChecksThem) {
  EXPECT_NE(run_log_.find("wrote " + LatentsFile()), std::string::npos) << run_log_;
  auto at_the_end = ReadWholeFile(LatentsFile());
  ASSERT_TRUE(at_the_end) << at_the_end.error();
  ActexOutcome inspect = RunActex(dir_.path() + "/inspect", {"inspect", "--latents", Out()});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(ReadWholeFile(LatentsFile()).value_or(""), *at_the_end);
  ActexOutcome verify = RunActex(dir_.path() + "/verify", {"verify", Out()});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  // Another file in its place (an earlier run's) is a fault saying what to run.
  std::filesystem::resize_file(LatentsFile(), at_the_end->size() / 2);
  ActexOutcome stale = RunActex(dir_.path() + "/stale", {"verify", Out()});
  EXPECT_NE(stale.exit_code, 0);
  EXPECT_NE((stale.out + stale.err).find("does not hold the merge"), std::string::npos)
      << stale.out << stale.err;
}

TEST_F(SaeRunOutput, LatentsPrintsTheStrongestExamplesTheShardsHoldWithTheTokenMarked) {
  auto by_site = LoadLatentExamples(LatentsFile());
  ASSERT_TRUE(by_site) << by_site.error();
  const LatentExamples& examples = by_site->at(kSaeSite);
  int32_t densest = 0;
  for (int32_t latent = 1; latent < examples.latents(); ++latent) {
    if (examples.fire_count(latent) > examples.fire_count(densest)) densest = latent;
  }
  const std::vector<Firing> firings = FiringsOf(Out(), densest);
  ASSERT_GT(firings.size(), 1u);
  ActexOutcome shown =
      RunActex(dir_.path() + "/latents", {"latents", Out(), "--latent", std::to_string(densest),
                                          "--tokenizer", kTokenizer, "--context", "2"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  std::istringstream lines(shown.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_NE(line.find("latent " + std::to_string(densest) + ": fired on " +
                      std::to_string(firings.size()) + " of "),
            std::string::npos)
      << line;
  const size_t expected = std::min<size_t>(firings.size(), examples.examples());
  size_t rank = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(rank, expected) << shown.out;
    int number = 0, position = 0;
    float value = 0;
    long long doc = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "#%d value %f doc %lld position %d: ", &number, &value,
                          &doc, &position),
              4)
        << line;
    const Firing& firing = firings[rank++];
    EXPECT_EQ(number, static_cast<int>(rank));
    EXPECT_EQ(doc, firing.doc_id) << line;
    EXPECT_EQ(position, firing.position) << line;
    EXPECT_NEAR(value, firing.value, 1e-5 * firing.value) << line;
    const size_t open = line.find("\u00AB"), close = line.find("\u00BB");
    EXPECT_TRUE(open != std::string::npos && close > open) << line;
  }
  EXPECT_EQ(rank, expected) << shown.out;
}

TEST_F(SaeRunOutput, LatentsRefusesALatentOutOfRangeAndAMissingMergeSayingWhatToRun) {
  const std::vector<std::string> args = {"latents", Out(),         "--latent",
                                         "256",     "--tokenizer", kTokenizer};
  ActexOutcome past = RunActex(dir_.path() + "/past", args);
  EXPECT_EQ(past.exit_code, 1);
  EXPECT_NE(past.err.find("latent 256 is out of range: the SAE on " + kSaeSite + " has 256"),
            std::string::npos)
      << past.err;
  std::filesystem::remove(LatentsFile());
  ActexOutcome missing = RunActex(dir_.path() + "/missing", args);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("run `actex inspect --latents " + Out() + "` first"),
            std::string::npos)
      << missing.err;
}

TEST_F(SaeRunOutput, DelphiExportWritesEveryFiringLatentInTheSaesLatentRanges) {
  const std::string to = dir_.path() + "/delphi";
  ActexOutcome exported = RunActex(
      dir_.path() + "/export",
      {"export", "--format", "delphi", Out(), "--to", to, "--ctx-len", "16", "--splits", "4"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(
      exported.out.find("exported " + std::to_string(FiringEntries(Out())) + " latent locations"),
      std::string::npos)
      << exported.out;
  // d_sae 256 as config.saes records it, split 4 ways as delphi splits it.
  for (const char* range : {"0_63", "64_127", "128_191", "192_255"}) {
    EXPECT_TRUE(std::filesystem::exists(to + "/" + kSaeSite + "/" + range + ".safetensors"))
        << range;
  }
  EXPECT_TRUE(std::filesystem::exists(to + "/" + kSaeSite + "/config.json"));
}

TEST_F(SaeRunOutput,
       DelphiExportRefusesADestinationInsideTheOutputAnOutOfRangeFlagAndASiteWithoutLatents) {
  ActexOutcome inside = RunActex(
      dir_.path() + "/inside", {"export", "--format", "delphi", Out(), "--to", Out() + "/delphi"});
  EXPECT_EQ(inside.exit_code, 2) << inside.err;
  EXPECT_FALSE(std::filesystem::exists(Out() + "/delphi"));
  ActexOutcome huge =
      RunActex(dir_.path() + "/huge", {"export", "--format", "delphi", Out(), "--to",
                                       dir_.path() + "/delphi", "--ctx-len", "2000000000"});
  EXPECT_EQ(huge.exit_code, 2) << huge.err;
  EXPECT_NE(huge.err.find("--ctx-len 2000000000 is above"), std::string::npos) << huge.err;
  ActexOutcome dense = RunActex(dir_.path() + "/dense", {"export", "--format", "delphi", Out(),
                                                         "--to", dir_.path() + "/delphi", "--sites",
                                                         "blocks.1.hook_resid_post.latents.ids"});
  EXPECT_EQ(dense.exit_code, 2) << "refused before anything was written";
  EXPECT_NE(dense.err.find("(sites with latents: " + kSaeSite + ")"), std::string::npos)
      << dense.err;
}

}  // namespace
}  // namespace actex
