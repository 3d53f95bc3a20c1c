#include "storage/job_latents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "storage/earlier_output.h"
#include "storage/shard_writer.h"
#include "tests/storage/latent_documents.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kJobDocuments = 14;

// Writes documents `docs` (chunks of one document, in the order given) into `dir`,
// finishing complete or not.
void WriteHost(const ShardWriterOptions& options, const std::vector<int64_t>& docs,
               bool complete = true) {
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer) << writer.error();
  for (int64_t doc : docs) ASSERT_TRUE(AddWhole(**writer, MakeLatentDocument(doc, 2 + doc % 5)));
  ASSERT_TRUE((*writer)->Finish(complete));
}

std::string MergedBytes(const std::vector<std::string>& hosts) {
  auto job = MergeJobLatents(hosts);
  EXPECT_TRUE(job) << job.error();
  if (!job) return "";
  auto bytes = EncodeLatentExamples(job->by_site);
  EXPECT_TRUE(bytes);
  return *bytes;
}

TEST(MergeJobLatents, SameBitsWhateverTheHostsShardsAndResumes) {
  TempDir dir;
  std::vector<int64_t> all(kJobDocuments);
  for (int64_t doc = 0; doc < kJobDocuments; ++doc) all[doc] = doc;
  WriteHost(LatentWriterOptions(dir.File("one/host_00"), int64_t{1} << 30), all);
  const std::string one = MergedBytes({dir.File("one/host_00")});
  auto job = MergeJobLatents({dir.File("one/host_00")});
  ASSERT_TRUE(job);
  EXPECT_EQ(job->files, 1);

  // Three leased hosts granted chunks out of order, small shards.
  WriteHost(LatentWriterOptions(dir.File("three/host_00"), 300), {9, 0, 3, 12});
  WriteHost(LatentWriterOptions(dir.File("three/host_01"), 300), {1, 13, 4, 7, 10});
  WriteHost(LatentWriterOptions(dir.File("three/host_02"), 1), {2, 5, 6, 8, 11});
  EXPECT_EQ(MergedBytes(
                {dir.File("three/host_00"), dir.File("three/host_01"), dir.File("three/host_02")}),
            one);

  // One host killed (its unended chunk dropped) and resumed from what it listed.
  const std::string host = dir.File("resumed/host_00");
  {
    auto writer = ShardWriter::Open(LatentWriterOptions(host, 400));
    ASSERT_TRUE(writer);
    for (int64_t doc = 0; doc < 6; ++doc)
      ASSERT_TRUE(AddWhole(**writer, MakeLatentDocument(doc, 2 + doc % 5)));
    ASSERT_TRUE((*writer)->Add(MakeLatentDocument(6, 2 + 6 % 5).View()));
    // The process dies here: the open chunk and shard are never listed.
  }
  auto earlier = ReadEarlierOutput(host);
  ASSERT_TRUE(earlier && *earlier) << earlier.error();
  ShardWriterOptions resumed = LatentWriterOptions(host, 400);
  resumed.continue_from = (*earlier)->metadata;
  std::vector<int64_t> rest;
  for (int64_t doc = 0; doc < kJobDocuments; ++doc) {
    if (!(*earlier)->chunks.contains(doc)) rest.push_back(doc);
  }
  ASSERT_LT(rest.size(), static_cast<size_t>(kJobDocuments));  // something was listed before
  WriteHost(resumed, rest);
  EXPECT_EQ(MergedBytes({host}), one);
}

TEST(MergeJobLatents, AnExamplesFileOtherThanListedIsRefusedNamingIt) {
  TempDir dir;
  WriteHost(LatentWriterOptions(dir.File("host_00"), 1), {0, 1});
  const std::string file = dir.File("host_00/shard_000002.examples.safetensors");
  std::filesystem::copy_file(dir.File("host_00/shard_000001.examples.safetensors"), file,
                             std::filesystem::copy_options::overwrite_existing);
  auto job = MergeJobLatents({dir.File("host_00")});
  ASSERT_FALSE(job);
  EXPECT_THAT(job.error(), HasSubstr(file + " holds "));
  EXPECT_THAT(job.error(), HasSubstr("; metadata.json lists"));
}

TEST(JobLatentsFile, WrittenBesideTheHostFoldersItAgreesWithThemUntilTheyChange) {
  TempDir dir;
  const std::vector<std::string> hosts = {dir.File("out/host_00"), dir.File("out/host_01")};
  WriteHost(LatentWriterOptions(hosts[0], 300), {0, 2, 4});
  WriteHost(LatentWriterOptions(hosts[1], 300), {1, 3});
  const JobLatentsCheck absent = CheckJobLatentsFile(dir.File("out"), hosts);
  EXPECT_TRUE(absent.agrees && absent.note.empty());

  auto written = WriteJobLatents(dir.File("out"), hosts);
  ASSERT_TRUE(written) << written.error();
  EXPECT_EQ(written->files, 2);
  const JobLatentsCheck equal = CheckJobLatentsFile(dir.File("out"), hosts);
  EXPECT_TRUE(equal.agrees && equal.note.empty()) << equal.note;

  // The job resumed with more documents: the file summarises the run before.
  WriteHost(LatentWriterOptions(dir.File("out/host_02"), 300), {5, 6});
  const JobLatentsCheck stale =
      CheckJobLatentsFile(dir.File("out"), {hosts[0], hosts[1], dir.File("out/host_02")});
  EXPECT_FALSE(stale.agrees);
  EXPECT_THAT(stale.note, HasSubstr("run `actex inspect --latents " + dir.File("out")));
}

TEST(JobLatentsFile, AJobWithoutExamplesIsRefusedAndNothingIsWritten) {
  TempDir dir;
  ShardWriterOptions dense = LatentWriterOptions(dir.File("out/host_00"), 300);
  dense.sae_latents.clear();
  dense.sae_examples = 0;
  WriteHost(dense, {0, 1});
  auto written = WriteJobLatents(dir.File("out"), {dir.File("out/host_00")});
  ASSERT_FALSE(written);
  EXPECT_THAT(written.error(), HasSubstr("no listed shard has latent examples"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/") + kJobLatentsFile));
}

}  // namespace
}  // namespace actex
