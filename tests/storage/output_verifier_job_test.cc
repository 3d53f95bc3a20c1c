// VerifyOutput on whole jobs: duplicated documents, the corpus (gzip'd, moved, cut by
// --max-docs), machines of independent jobs, malformed files, folders without hosts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "storage/host_folder_files.h"
#include "storage/output_verifier.h"
#include "tests/storage/output_verifier_test_util.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class OutputVerifier : public verify_test::VerifyTest {};

TEST_F(OutputVerifier, DuplicatedDocumentsAreListedWithWhereTheyAre) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 4);
  const nlohmann::json config = {{"data", {corpus}}, {"max_docs", -1}};
  WriteHost(dir.File("out/host_00"), {{0, 1}, {2, 3}, config});
  // A second folder holding a copy of the first one's listing and shards.
  fs::copy(dir.File("out/host_00"), dir.File("out/host_01"), fs::copy_options::recursive);
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_EQ(report->coverage.duplicated, 4);
  EXPECT_THAT(report->duplicated_ids.at(0),
              ElementsAre("host_00/shard_000001.safetensors", "host_01/shard_000001.safetensors"));
  EXPECT_THAT(report->duplicated_ids.at(3),
              ElementsAre("host_00/rejects.jsonl", "host_01/rejects.jsonl"));
  EXPECT_THAT(report->Summary(), HasSubstr("verified 4 documents: 0 written, 0 rejected, "
                                           "0 missing, 4 duplicated"));
}

TEST_F(OutputVerifier, WrittenAndRejectedIsADuplicate) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 3);
  WriteHost(dir.File("out/host_00"), {{0, 1, 2}, {1}, {{"data", {corpus}}, {"max_docs", -1}}});
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_EQ(report->coverage.duplicated, 1);
  EXPECT_THAT(report->duplicated_ids.at(1),
              ElementsAre("host_00/shard_000002.safetensors", "host_00/rejects.jsonl"));
}

TEST_F(OutputVerifier, GzipCorpusIsCountedAndMaxDocsHonoured) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 10, /*gzip=*/true);
  const nlohmann::json config = {{"data", {corpus}}, {"max_docs", 6}};
  WriteHost(dir.File("out/host_00"), {{0, 1, 2, 3, 5}, {4}, config});
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_TRUE(report->clean()) << report->faults.front().problem;
  EXPECT_THAT(report->Summary(), HasSubstr("verified 6 documents: 5 written, 1 rejected"));
}

TEST_F(OutputVerifier, DocumentBeyondTheCorpusIsUnexpected) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 2);
  WriteHost(dir.File("out/host_00"), {{0, 1, 7}, {}, {{"data", {corpus}}, {"max_docs", -1}}});
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_EQ(report->unexpected, 1);
  EXPECT_THAT(report->unexpected_ids.at(7),
              ElementsAre("host_00/shard_000003.safetensors: beyond the corpus's 2 documents"));
}

TEST_F(OutputVerifier, MovedCorpusIsAFaultUntilGivenWithData) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 2);
  WriteHost(dir.File("out/host_00"), {{0, 1}, {}, {{"data", {corpus}}, {"max_docs", -1}}});
  fs::rename(corpus, dir.File("moved.jsonl"));
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  ASSERT_EQ(report->faults.size(), 1u);
  EXPECT_THAT(report->faults[0].problem,
              AllOf(HasSubstr("cannot read the corpus host_00/metadata.json names"),
                    HasSubstr("give its files with --data")));
  EXPECT_THAT(report->Summary(), HasSubstr("document coverage not checked"));
  report = VerifyOutput(Options(dir.File("out"), {dir.File("mov*.jsonl")}));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_TRUE(report->clean());
  EXPECT_THAT(report->Summary(), HasSubstr("verified 2 documents: 2 written"));
}

TEST_F(OutputVerifier, EachMachineIsCheckedForItsOwnShareAndOneHostFolderAlone) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 7);
  auto config = [&](int machine) {
    return nlohmann::json{
        {"data", {corpus}}, {"max_docs", -1}, {"machine_id", machine}, {"total_machines", 2}};
  };
  WriteHost(dir.File("out/machine_000_host_00"), {{0, 2, 6}, {4}, config(0)});
  VerifyOptions options = Options(dir.File("out"), {}, MachineRole);
  auto report = VerifyOutput(options);
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_TRUE(report->clean()) << report->faults.front().problem;
  EXPECT_THAT(report->Summary(), HasSubstr("verified 4 documents: 3 written, 1 rejected"));
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_EQ(report->warnings[0].problem,
            "machine 1 has no folder here: its share of the corpus is not checked");

  WriteHost(dir.File("out/machine_001_host_00"), {{1, 3}, {}, config(1)});
  report = VerifyOutput(options);
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_THAT(report->Summary(), HasSubstr("verified 7 documents: 5 written, 1 rejected, "
                                           "1 missing"));
  EXPECT_TRUE(report->missing_ids.contains(5));
  EXPECT_THAT(report->warnings, IsEmpty());

  options.out_dir = dir.File("out/machine_001_host_00");  // a host folder alone
  report = VerifyOutput(options);
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_THAT(report->Summary(), HasSubstr("verified 3 documents: 2 written, 0 rejected, "
                                           "1 missing"));
}

TEST_F(OutputVerifier, MalformedMetadataAndRejectsAreFaults) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 2);
  WriteHost(dir.File("out/host_00"), {{0}, {1}, {{"data", {corpus}}, {"max_docs", -1}}});
  fs::create_directories(dir.File("out/host_01"));
  WriteBytes(dir.File("out/host_01/metadata.json"), "{\"format\": \"actex-activations\", ");
  std::string rejects = ReadBytes(dir.File("out/host_00/rejects.jsonl"));
  WriteBytes(dir.File("out/host_00/rejects.jsonl"), rejects + "{\"doc_id\": -1}\n");
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  ASSERT_EQ(report->faults.size(), 2u);
  EXPECT_EQ(report->faults[0].file, "host_01/metadata.json");
  EXPECT_THAT(report->faults[0].problem, HasSubstr("is not valid JSON"));
  EXPECT_EQ(report->faults[1].file, "host_00/rejects.jsonl");
  EXPECT_EQ(report->faults[1].problem,
            "line 2 is not {\"doc_id\", \"file\", \"line\", \"reason\"}");
}

TEST_F(OutputVerifier, FolderWithoutHostFoldersCannotBeVerified) {
  TempDir dir;
  auto report = VerifyOutput(Options(dir.path()));
  ASSERT_FALSE(report.has_value());
  EXPECT_THAT(report.error(), HasSubstr("holds no host folder with a metadata.json"));
  report = VerifyOutput(Options(dir.File("absent")));
  ASSERT_FALSE(report.has_value());
  EXPECT_THAT(report.error(), HasSubstr("is not a directory"));
}

}  // namespace
}  // namespace actex
