// VerifyOutput where shards were uploaded and their local copies deleted: the upload
// ledger vouches for them, and only for what it records.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/crc32.h"
#include "storage/output_verifier.h"
#include "storage/upload_ledger.h"
#include "tests/storage/output_verifier_test_util.h"

namespace actex {
namespace {

using verify_test::UploadedShards;

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(UploadedShards, DeletedShardsAreNotesAndTheirDocumentsAreInferred) {
  const std::string metadata = ReadBytes(Host(0) + "/metadata.json");
  auto ledger = UploadLedger::Open(Host(0));
  ASSERT_TRUE(ledger.has_value());
  ASSERT_TRUE((*ledger)
                  ->Append({"metadata.json", static_cast<int64_t>(metadata.size()),
                            Crc32Hex(metadata), false, 1.0})
                  .has_value());
  ledger->reset();
  Upload(0, 0);                     // documents 0, 2, 6 around the rejected 4
  Upload(0, 1, /*deleted=*/false);  // uploaded and kept: checked as usual
  Upload(1, 1);                     // gzip'd, document 3
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_EQ(report.warnings[0].file, "host_00/shard_000001.safetensors");
  EXPECT_THAT(report.warnings[0].problem,
              HasSubstr("uploaded and deleted locally (uploads.jsonl): its contents were not "
                        "re-read here; verify the uploaded copy ("));
  EXPECT_EQ(report.warnings[1].file, "host_01/shard_000002.safetensors.gz");
  ASSERT_EQ(report.folders.size(), 2u);
  EXPECT_EQ(report.folders[0].uploaded_deleted, 1);
  EXPECT_EQ(report.folders[1].uploaded_deleted, 1);
  EXPECT_EQ(report.coverage.written, 8);
  EXPECT_EQ(report.coverage.rejected, 2);
  EXPECT_EQ(report.coverage.missing, 0);
  EXPECT_THAT(report.Summary(),
              AllOf(HasSubstr("verified 10 documents: 8 written, 2 rejected, 0 missing"),
                    HasSubstr("(2 shards uploaded and deleted locally, not re-read)")));
}

TEST_F(UploadedShards, MissingShardTheLedgerDoesNotVouchForIsAFault) {
  struct Case {
    const char* what;
    bool deleted;
    std::string crc32;
    std::string problem;
  };
  for (const Case& c :
       {Case{"another crc32", true, "00000000", "records an upload of other contents ("},
        Case{"not deleted", false, "", "records it uploaded but not deleted"}}) {
    SCOPED_TRACE(c.what);
    fs::remove_all(Out());  // a fresh output for each case
    SetUp();
    Upload(0, 0, c.deleted, c.crc32);
    if (!c.deleted) fs::remove(Host(0) + "/shard_000001.safetensors");
    VerifyReport report = Verify();
    EXPECT_THAT(Faults(report),
                ElementsAre(AllOf(HasSubstr("host_00/shard_000001.safetensors: listed in "
                                            "metadata.json but missing; uploads.jsonl "),
                                  HasSubstr(c.problem)),
                            HasSubstr("3 documents missing")));
    EXPECT_EQ(report.folders[0].uploaded_deleted, 0);
  }
  fs::remove_all(Out());
  SetUp();
  Upload(0, 1, /*deleted=*/false);
  fs::remove(Host(0) + "/shard_000001.safetensors");
  EXPECT_THAT(Faults(Verify()),
              ElementsAre("host_00/shard_000001.safetensors: listed in metadata.json but "
                          "missing; uploads.jsonl has no record of uploading it",
                          HasSubstr("3 documents missing")));
}

TEST_F(UploadedShards, InferredDocumentCountOtherThanListedIsAFault) {
  Upload(0, 0);
  WriteBytes(Host(0) + "/rejects.jsonl", "");  // document 4 no longer rejected
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre("host_00/shard_000001.safetensors: uploaded and deleted locally: "
                          "inferred 4 documents from its doc ids 0..6 (its chunks, less "
                          "its rejects.jsonl), metadata.json lists 3; none of them is counted "
                          "as written",
                          HasSubstr("4 documents missing (neither written nor in a "
                                    "rejects.jsonl): 0, 2, 4, 6")));
}

TEST_F(UploadedShards, PresentShardIsCheckedEvenIfTheLedgerSaysDeleted) {
  const std::string shard = Host(0) + "/shard_000002.safetensors";
  const std::string kept = ReadBytes(shard);
  Upload(0, 1);
  std::string damaged = kept;
  uint64_t header = 0;
  std::memcpy(&header, damaged.data(), 8);
  damaged[8 + header + 1] ^= 0x40;  // inside the site tensor
  WriteBytes(shard, damaged);       // a damaged copy back in place of the uploaded one
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre(HasSubstr("host_00/shard_000002.safetensors: crc32 is ")));
  EXPECT_EQ(report.folders[0].uploaded_deleted, 0);
}

TEST_F(UploadedShards, MalformedLedgerLineIsAFaultAndExcusesNothing) {
  Upload(0, 0);
  const std::string ledger = ReadBytes(Host(0) + "/uploads.jsonl");
  WriteBytes(Host(0) + "/uploads.jsonl", "{\"file\": 1}\n" + ledger + "{\"file\":\"sha");
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre(HasSubstr("host_00/uploads.jsonl: line 1 is not an upload record"),
                          "host_00/shard_000001.safetensors: listed in metadata.json but "
                          "missing; uploads.jsonl, which could tell whether it was uploaded, "
                          "is damaged",
                          HasSubstr("3 documents missing")));
  // Only the torn last line: ignored, as an append cut short by a crash.
  WriteBytes(Host(0) + "/uploads.jsonl", ledger + "{\"file\":\"sha");
  report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  EXPECT_THAT(report.warnings, ElementsAre(testing::Field(&VerifyFinding::file,
                                                          "host_00/shard_000001.safetensors")));
}

}  // namespace
}  // namespace actex
