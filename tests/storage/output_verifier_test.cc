// VerifyOutput on the host folders of a clean two-host job, damaged one way at a
// time: every fault must be found, named by its file, and nothing else.
#include "storage/output_verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/crc32.h"
#include "storage/host_folder_files.h"
#include "storage/safetensors.h"
#include "tests/storage/output_verifier_test_util.h"

namespace actex {
namespace {

using verify_test::TwoHosts;

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(TwoHosts, CleanOutputVerifiesWithItsSummary) {
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  EXPECT_THAT(report.warnings, IsEmpty());
  const int64_t bytes = ReadJson(Host(0) + "/metadata.json")["totals"]["bytes"].get<int64_t>() +
                        ReadJson(Host(1) + "/metadata.json")["totals"]["bytes"].get<int64_t>();
  EXPECT_EQ(report.Summary(),
            "verified 10 documents: 8 written, 2 rejected, 0 missing, "
            "0 duplicated; 8 shards, " +
                std::to_string(bytes) + " bytes");
  ASSERT_EQ(report.folders.size(), 2u);
  EXPECT_EQ(report.folders[1].label, "host_01");
  EXPECT_EQ(report.folders[1].rejected, 1);
}

// host_00 lists chunk 4 (one document, rejected): without its reject line the chunk
// is listed but not whole.
TEST_F(TwoHosts, AListedChunkMissingADocumentIsNotWhole) {
  WriteBytes(Host(0) + "/rejects.jsonl", "");
  EXPECT_THAT(Faults(Verify()),
              ElementsAre("host_00/metadata.json: 1 listed chunks are not whole (chunk 4 lists 1 "
                          "documents, the shards and rejects.jsonl hold 0)",
                          HasSubstr("1 documents missing")));
}

// A run that stopped after logging a reject but before listing its chunk: the line
// is a leftover, warned about and not counted (a resume removes it).
TEST_F(TwoHosts, ARejectOfAnUnlistedChunkIsALeftoverNotADocument) {
  nlohmann::json metadata = ReadJson(Host(0) + "/metadata.json");
  for (auto& shard : metadata["shards"]) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& chunk : shard["chunks"]) {
      if (chunk[0] != 4) kept.push_back(chunk);
    }
    shard["chunks"] = kept;
  }
  WriteJson(Host(0) + "/metadata.json", metadata);
  VerifyReport report = Verify(/*allow_incomplete=*/true);
  EXPECT_THAT(Faults(report), ElementsAre(HasSubstr("1 documents missing")));
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].file, "host_00/rejects.jsonl");
  EXPECT_THAT(report.warnings[0].problem, HasSubstr("1 rejects of chunks no shard lists"));
  EXPECT_EQ(report.folders[0].rejected, 0);
}

TEST_F(TwoHosts, AShardHoldingADocumentOfAChunkItDoesNotListIsAFault) {
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  metadata["shards"][0]["chunks"] = nlohmann::json::parse("[[3, 1]]");  // it holds document 1
  WriteJson(Host(1) + "/metadata.json", metadata);
  EXPECT_THAT(Faults(Verify()),
              testing::Contains("host_01/shard_000001.safetensors.gz: holds document 1 of chunk "
                                "1, which its listing does not name"));
}

TEST_F(TwoHosts, FlippedActivationByteIsACrcFaultOfThatShardOnly) {
  const std::string shard = Host(0) + "/shard_000002.safetensors";
  std::string bytes = ReadBytes(shard);
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  bytes[8 + header + 1] ^= 0x40;  // inside the first site tensor
  WriteBytes(shard, bytes);
  EXPECT_THAT(Faults(Verify()),
              ElementsAre(AllOf(HasSubstr("host_00/shard_000002.safetensors: crc32 is "),
                                HasSubstr("metadata.json lists"))));
}

TEST_F(TwoHosts, FlippedByteOfAGzipShardIsFound) {
  const std::string shard = Host(1) + "/shard_000003.safetensors.gz";
  std::string bytes = ReadBytes(shard);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteBytes(shard, bytes);
  EXPECT_THAT(Faults(Verify()),
              testing::Contains(HasSubstr("host_01/shard_000003.safetensors.gz: crc32 is ")));
}

TEST_F(TwoHosts, TruncatedShardIsASizeFault) {
  for (const std::string& shard :
       {Host(0) + "/shard_000001.safetensors", Host(1) + "/shard_000001.safetensors.gz"}) {
    fs::resize_file(shard, fs::file_size(shard) / 2);
  }
  auto faults = Faults(Verify());
  EXPECT_THAT(faults, testing::Contains(AllOf(HasSubstr("host_00/shard_000001.safetensors: is "),
                                              HasSubstr("(truncated or overwritten)"))));
  EXPECT_THAT(faults, testing::Contains(HasSubstr("host_01/shard_000001.safetensors.gz: is ")));
  EXPECT_THAT(
      faults,
      testing::Contains(HasSubstr("host_01/shard_000001.safetensors.gz: gzip stream ends early")));
}

TEST_F(TwoHosts, DeletedShardIsReportedAndItsDocumentMissing) {
  fs::remove(Host(0) + "/shard_000003.safetensors");  // document 6
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre("host_00/shard_000003.safetensors: listed in metadata.json but missing",
                          HasSubstr("1 documents missing (neither written nor in a "
                                    "rejects.jsonl): 6")));
  EXPECT_EQ(report.coverage.missing, 1);
}

TEST_F(TwoHosts, TamperedHeaderIsReportedEvenWithAMatchingChecksum) {
  const std::string shard = Host(0) + "/shard_000001.safetensors";
  std::string bytes = ReadBytes(shard);
  const size_t at = bytes.find("hook_resid_post");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 15, "hook_resid_pre_");  // same length: the header still parses
  WriteBytes(shard, bytes);
  nlohmann::json metadata = ReadJson(Host(0) + "/metadata.json");
  char crc[9];
  std::snprintf(crc, sizeof(crc), "%08x", Crc32Of(bytes));
  metadata["shards"][0]["crc32"] = crc;
  WriteJson(Host(0) + "/metadata.json", metadata);
  EXPECT_THAT(Faults(Verify()),
              ElementsAre("host_00/shard_000001.safetensors: has no tensor "
                          "\"blocks.0.hook_resid_post\"",
                          "host_00/shard_000001.safetensors: holds unexpected tensor "
                          "\"blocks.0.hook_resid_pre_\""));
}

TEST_F(TwoHosts, ListingThatDoesNotMatchTheShardsDocIdsIsAFault) {
  nlohmann::json metadata = ReadJson(Host(0) + "/metadata.json");
  metadata["shards"][1]["first_doc_id"] = 3;  // the shard holds document 2
  metadata["shards"][1]["last_doc_id"] = 3;
  WriteJson(Host(0) + "/metadata.json", metadata);
  EXPECT_THAT(Faults(Verify()), ElementsAre("host_00/shard_000002.safetensors: holds documents "
                                            "2..2, metadata.json lists 3..3"));
}

TEST_F(TwoHosts, DocumentWhoseShardAndListingAreGoneIsMissing) {
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  const nlohmann::json entry = metadata["shards"][1];  // document 3
  metadata["shards"].erase(1);
  for (const char* key : {"docs", "tokens", "bytes"}) {
    metadata["totals"][key] = metadata["totals"][key].get<int64_t>() - entry[key].get<int64_t>();
  }
  metadata["totals"]["shards"] = 3;
  WriteJson(Host(1) + "/metadata.json", metadata);
  fs::remove(Host(1) + "/" + entry["file"].get<std::string>());
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), ElementsAre(HasSubstr("1 documents missing")));
  EXPECT_EQ(report.missing_ids.size(), 1u);
  EXPECT_TRUE(report.missing_ids.contains(3));
  EXPECT_THAT(report.Summary(), HasSubstr("verified 10 documents: 7 written, 2 rejected, "
                                          "1 missing, 0 duplicated; 7 shards"));
}

TEST_F(TwoHosts, UnlistedLeftoversAreWarningsNotFaults) {
  fs::copy_file(Host(0) + "/shard_000004.safetensors", Host(0) + "/shard_000005.safetensors");
  WriteBytes(Host(0) + "/shard_000006.safetensors.tmp", "partial");
  WriteBytes(Host(1) + "/metadata.json.tmp", "{");
  WriteBytes(Host(1) + "/" + SpillFileName(7, 1), "rows");  // a killed writer's
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 4u);
  EXPECT_EQ(report.warnings[0].file, "host_00/shard_000005.safetensors");
  EXPECT_THAT(report.warnings[0].problem, HasSubstr("not listed in metadata.json"));
  EXPECT_EQ(report.warnings[1].file, "host_00/shard_000006.safetensors.tmp");
  EXPECT_EQ(report.warnings[2].file, "host_01/.shard_7.spill.1");
  EXPECT_THAT(report.warnings[2].problem, HasSubstr("temporary file of an interrupted write"));
  EXPECT_EQ(report.warnings[3].file, "host_01/metadata.json.tmp");
}

// A leased job with a standby leaves host 0's lease log and the standby's copy of it
// beside the shards: actex's own files, unlike a stranger's.
TEST_F(TwoHosts, TheLeaseLogAndTheStandbysCopyAreActexsOwnFiles) {
  WriteBytes(Host(0) + "/" + kLeaseLogFile, "actex-leases 1 chunk_docs 2\n");
  WriteBytes(Host(1) + "/" + kStandbyLeaseLogFile, "actex-leases 1 chunk_docs 2\n");
  WriteBytes(Host(1) + "/notes.txt", "mine");
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].file, "host_01/notes.txt");
  EXPECT_EQ(report.warnings[0].problem, "file not written by actex");
}

TEST_F(TwoHosts, MissingHostFolderIsReported) {
  fs::remove_all(Host(1));
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre(HasSubstr("host_01: is missing"), HasSubstr("5 documents missing")));
  EXPECT_EQ(report.missing_ids.size(), 5u);
  EXPECT_TRUE(report.missing_ids.contains(7));
}

TEST_F(TwoHosts, DocumentInAnotherHostsShareIsUnexpected) {
  fs::remove_all(Host(1));
  // host_01 holding what host_00 wrote: both claim the even documents.
  fs::copy(Host(0), Host(1), fs::copy_options::recursive);
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  metadata["config"]["host_id"] = 1;
  WriteJson(Host(1) + "/metadata.json", metadata);
  VerifyReport report = Verify();
  EXPECT_EQ(report.coverage.duplicated, 5);  // 0 2 4 6 8, each in both folders
  EXPECT_EQ(report.coverage.missing, 5);     // 1 3 5 7 9: host_01's own share
  EXPECT_EQ(report.unexpected, 5);
  EXPECT_THAT(report.unexpected_ids.at(2),
              ElementsAre("host_01/shard_000002.safetensors: not this folder's share of the "
                          "corpus"));
}

TEST_F(TwoHosts, IncompleteRunIsAFaultUnlessAllowed) {
  fs::remove_all(Host(1));
  WriteHost(Host(1), {{1, 3}, {}, Config(corpus_, 1, 2), /*gzip=*/false, /*finish=*/false});
  EXPECT_THAT(Faults(Verify()),
              ElementsAre(HasSubstr("host_01: did not finish"), HasSubstr("3 documents missing")));
  VerifyReport allowed = Verify(/*allow_incomplete=*/true);
  EXPECT_THAT(Faults(allowed), IsEmpty());
  EXPECT_EQ(allowed.coverage.pending, 3);
  EXPECT_THAT(allowed.Summary(), HasSubstr("10 documents: 6 written, 1 rejected, 3 not yet "
                                           "written, 0 missing, 0 duplicated"));
}

// A shard written by hand: document 3 in two runs, positions not counting from 0.
TEST_F(TwoHosts, SplitDocumentAndBadPositionsAreFaults) {
  const std::vector<int64_t> doc_ids = {3, 3, 5, 3};
  const std::vector<int32_t> positions = {0, 2, 0, 0};
  auto copy = [](const void* data, size_t size) {
    return [data, size](std::span<uint8_t> out) { std::memcpy(out.data(), data, size); };
  };
  const std::vector<int32_t> token_ids(4, 1);
  std::vector<uint16_t> bf16(16, 0x3f00);
  const std::string shard = Host(1) + "/shard_000005.safetensors";
  ASSERT_TRUE(WriteSafetensors(shard,
                               {{"blocks.0.hook_resid_post", "BF16", {4, 4}, copy(bf16.data(), 32)},
                                {"token_ids", "I32", {4}, copy(token_ids.data(), 16)},
                                {"doc_ids", "I64", {4}, copy(doc_ids.data(), 32)},
                                {"positions", "I32", {4}, copy(positions.data(), 16)}},
                               {{"format", "pt"}})
                  .has_value());
  const std::string bytes = ReadBytes(shard);
  char crc[9];
  std::snprintf(crc, sizeof(crc), "%08x", Crc32Of(bytes));
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  const auto size = static_cast<int64_t>(bytes.size());
  metadata["shards"].push_back({{"file", "shard_000005.safetensors"},
                                {"first_doc_id", 11},
                                {"last_doc_id", 13},
                                {"docs", 2},
                                {"tokens", 4},
                                {"bytes", size},
                                {"crc32", crc}});
  for (auto [key, add] : {std::pair{"docs", 2}, {"tokens", 4}, {"shards", 1}}) {
    metadata["totals"][key] = metadata["totals"][key].get<int64_t>() + add;
  }
  metadata["totals"]["bytes"] = metadata["totals"]["bytes"].get<int64_t>() + size;
  WriteJson(Host(1) + "/metadata.json", metadata);
  EXPECT_THAT(
      Faults(Verify()),
      ElementsAre(
          HasSubstr("host_01/shard_000005.safetensors: document 3: token 1 has position 2, "
                    "expected 1"),
          "host_01/shard_000005.safetensors: doc ids go back from 5 to 3 at token 3: documents "
          "must be whole and in increasing order",
          "host_01/shard_000005.safetensors: holds 3 documents, metadata.json lists 2",
          "host_01/shard_000005.safetensors: holds documents 3..3, metadata.json lists 11..13",
          HasSubstr("2 documents duplicated (written or rejected more than once): 3 "
                    "(host_01/shard_000002.safetensors.gz, host_01/shard_000005.safetensors), "
                    "5 (host_01/shard_000003.safetensors.gz, host_01/shard_000005.safetensors)")));
}

}  // namespace
}  // namespace actex
