// job_finished.json: the record a job's coordinator leaves when the job finished, read
// back as written, absent as nullopt, and damaged as an error naming the file and field.
#include "storage/finished_job_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/host_folder_files.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

FinishedJobRecord ARecord() {
  return {.fingerprint = {{"--layers", "0,1"}, {"corpus files", "corpus.jsonl:4316"}},
          .hosts = 4,
          .progress = "75 of 75 chunks listed"};
}

TEST(FinishedJobRecord, ReadsBackWhatWasWrittenWithTheTimeItWasWritten) {
  TempDir dir;
  ASSERT_TRUE(WriteFinishedJobRecord(dir.path(), ARecord()));
  auto read = ReadFinishedJobRecord(dir.path());
  ASSERT_TRUE(read) << read.error();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->fingerprint, ARecord().fingerprint);
  EXPECT_EQ((*read)->hosts, 4);
  EXPECT_EQ((*read)->progress, "75 of 75 chunks listed");
  EXPECT_THAT((*read)->finished_at, ::testing::MatchesRegex("20[0-9-]+T[0-9:]+Z"));
}

TEST(FinishedJobRecord, AFolderWithoutOneHasNone) {
  TempDir dir;
  auto read = ReadFinishedJobRecord(dir.path());
  ASSERT_TRUE(read) << read.error();
  EXPECT_FALSE(read->has_value());
}

TEST(FinishedJobRecord, ADamagedRecordIsRefusedNamingTheFileAndTheField) {
  TempDir dir;
  const std::string path = dir.File(kFinishedJobFile);
  WriteBytes(path, R"({"fingerprint": {"--layers": 3}, "hosts": 4, "progress": "", )"
                   R"("finished_at": ""})");
  auto read = ReadFinishedJobRecord(dir.path());
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error(), HasSubstr(path));
  EXPECT_THAT(read.error(), HasSubstr("fingerprint.--layers"));

  WriteBytes(path, "{\"fingerprint\": {}, \"hosts\": 0");
  read = ReadFinishedJobRecord(dir.path());
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error(), HasSubstr(path));
}

}  // namespace
}  // namespace actex
