// VerifyOutput on a host folder whose shards carry an SAE's latents: each shard's
// latent examples file is checked, and recomputed from the shard.
#include "storage/examples_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "storage/crc32.h"
#include "storage/earlier_output.h"
#include "storage/host_folder_files.h"
#include "storage/output_verifier.h"
#include "storage/shard_writer.h"
#include "storage/unlisted_shards.h"
#include "tests/storage/latent_documents.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kDocuments = 6;

// host_00 of a corpus of kDocuments lines, one document a shard (gzip'd when the
// parameter says so), each with its examples file.
class LatentOutput : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string corpus;
    for (int i = 0; i < kDocuments; ++i) corpus += "{\"input_ids\": [1]}\n";
    WriteBytes(dir_.File("corpus.jsonl"), corpus);
    ShardWriterOptions options = LatentWriterOptions(Host(), /*shard_bytes=*/1);
    options.dtype = OutputDtype::kF16;
    options.gzip = GetParam();
    options.run_config = {{"data", {dir_.File("corpus.jsonl")}}, {"max_docs", -1}};
    auto writer = ShardWriter::Open(options);
    ASSERT_TRUE(writer) << writer.error();
    for (int64_t doc = 0; doc < kDocuments; ++doc) {
      ASSERT_TRUE(AddWhole(**writer, MakeLatentDocument(doc, 2 + doc % 3)));
    }
    ASSERT_TRUE((*writer)->Finish());
  }
  std::string Host() const { return dir_.File("out/host_00"); }
  std::string Examples(int shard) const {
    return Host() + "/shard_00000" + std::to_string(shard) + ".examples.safetensors";
  }
  VerifyReport Verify() const {
    VerifyOptions options;
    options.out_dir = dir_.File("out");
    auto report = VerifyOutput(options);
    EXPECT_TRUE(report) << report.error();
    return *report;
  }
  // Lists the examples file of shard `shard` with what it now holds.
  void Relist(int shard) const {
    auto metadata = nlohmann::json::parse(ReadBytes(Host() + "/" + kMetadataFile));
    auto& entry = metadata["shards"][shard - 1]["examples"];
    const std::string bytes = ReadBytes(Examples(shard));
    entry["bytes"] = bytes.size();
    entry["crc32"] = Crc32Hex(bytes);
    WriteBytes(Host() + "/" + kMetadataFile, metadata.dump(2));
  }
  TempDir dir_;
};

TEST_P(LatentOutput, VerifiesClean) {
  const VerifyReport report = Verify();
  EXPECT_TRUE(report.clean()) << report.faults.front().file << ": "
                              << report.faults.front().problem;
  EXPECT_TRUE(report.warnings.empty());
}

TEST_P(LatentOutput, AnotherShardsExamplesAreCaughtByRecomputing) {
  fs::copy_file(Examples(2), Examples(1), fs::copy_options::overwrite_existing);
  Relist(1);  // bytes and crc32 agree: only recomputing can tell
  const VerifyReport report = Verify();
  ASSERT_EQ(report.faults.size(), 1u);
  EXPECT_EQ(report.faults[0].file, "host_00/shard_000001.examples.safetensors");
  EXPECT_THAT(report.faults[0].problem,
              HasSubstr(std::string("differ from what shard_000001.safetensors") +
                        (GetParam() ? ".gz" : "") + "'s latents give"));
}

TEST_P(LatentOutput, ADamagedExamplesFileIsAFaultNamingIt) {
  std::string bytes = ReadBytes(Examples(3));
  bytes[bytes.size() - 1] ^= 1;
  WriteBytes(Examples(3), bytes);
  const VerifyReport report = Verify();
  ASSERT_EQ(report.faults.size(), 1u);
  EXPECT_EQ(report.faults[0].file, "host_00/shard_000003.examples.safetensors");
  EXPECT_THAT(report.faults[0].problem, HasSubstr("; metadata.json lists"));
}

TEST_P(LatentOutput, AMissingExamplesFileIsAFault) {
  fs::remove(Examples(2));
  const VerifyReport report = Verify();
  ASSERT_EQ(report.faults.size(), 1u);
  EXPECT_EQ(report.faults[0].file, "host_00/shard_000002.examples.safetensors");
}

TEST_P(LatentOutput, AnUnlistedExamplesFileIsAWarning) {
  fs::copy_file(Examples(1), Host() + "/shard_000009.examples.safetensors");
  const VerifyReport report = Verify();
  EXPECT_TRUE(report.clean());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].file, "host_00/shard_000009.examples.safetensors");
  EXPECT_THAT(report.warnings[0].problem, HasSubstr("latent examples of a shard not listed"));
}

TEST_P(LatentOutput, AResumeRefusesAMissingExamplesFile) {
  fs::remove(Examples(2));
  auto earlier = ReadEarlierOutput(Host());
  ASSERT_FALSE(earlier);
  EXPECT_THAT(earlier.error(), HasSubstr(Examples(2) + " is listed in metadata.json but is "
                                                       "missing or has another size"));
}

TEST_P(LatentOutput, AResumeSetsAsideAnUnlistedExamplesFileAndKeepsTheListed) {
  fs::copy_file(Examples(1), Host() + "/shard_000009.examples.safetensors");
  auto earlier = ReadEarlierOutput(Host());
  ASSERT_TRUE(earlier && *earlier) << earlier.error();
  EXPECT_TRUE((*earlier)->listed_files.contains("shard_000001.examples.safetensors"));
  auto cleanup = SetAsideUnlisted(Host(), (*earlier)->listed_files);
  ASSERT_TRUE(cleanup) << cleanup.error();
  EXPECT_EQ(cleanup->set_aside,
            std::vector<std::string>{Host() + "/unlisted/shard_000009.examples.safetensors"});
  EXPECT_TRUE(fs::exists(Examples(1)));
}

INSTANTIATE_TEST_SUITE_P(Shards, LatentOutput, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Gzip" : "Plain";
                         });

}  // namespace
}  // namespace actex
