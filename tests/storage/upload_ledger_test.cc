// UploadLedger (uploads.jsonl): what a crash while appending can leave, and which
// records vouch for a shard whose local copy is gone.
#include "storage/upload_ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "storage/crc32.h"
#include "storage/shard_writer.h"
#include "tests/storage/latent_documents.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

UploadRecord Record(const std::string& file, int64_t bytes, const std::string& crc32,
                    bool deleted) {
  return UploadRecord{file, bytes, crc32, deleted, 1795000000.5};
}

void Append(const std::string& dir, const std::vector<UploadRecord>& records) {
  auto ledger = UploadLedger::Open(dir);
  ASSERT_TRUE(ledger.has_value()) << ledger.error();
  for (const auto& record : records) {
    auto appended = (*ledger)->Append(record);
    ASSERT_TRUE(appended.has_value()) << appended.error();
  }
}

TEST(UploadLedger, AppendedRecordsReadBackAndTheLastOfAFileWins) {
  TempDir dir;
  Append(dir.path(), {Record("metadata.json", 100, "00000001", false),
                      Record("shard_000001.safetensors", 4096, "1a2b3c4d", true)});
  Append(dir.path(), {Record("metadata.json", 180, "00000002", false)});  // reopened: appends
  auto ledger = UploadLedger::Read(dir.path());
  ASSERT_TRUE(ledger.has_value()) << ledger.error();
  ASSERT_EQ(ledger->size(), 2u);
  const UploadRecord& shard = ledger->at("shard_000001.safetensors");
  EXPECT_EQ(shard.file, "shard_000001.safetensors");
  EXPECT_EQ(shard.bytes, 4096);
  EXPECT_EQ(shard.crc32, "1a2b3c4d");
  EXPECT_TRUE(shard.deleted);
  EXPECT_DOUBLE_EQ(shard.unix_seconds, 1795000000.5);
  EXPECT_EQ(ledger->at("metadata.json").bytes, 180);
  EXPECT_EQ(ledger->at("metadata.json").crc32, "00000002");
  EXPECT_EQ(ReadBytes(dir.File("uploads.jsonl"))
                .find("{\"file\":\"metadata.json\",\"bytes\":100,\"crc32\":\"00000001\","
                      "\"deleted\":false,\"unix_seconds\":1795000000.5}\n"),
            0u);
}

TEST(UploadLedger, MissingFileIsAnEmptyLedger) {
  TempDir dir;
  auto ledger = UploadLedger::Read(dir.path());
  ASSERT_TRUE(ledger.has_value()) << ledger.error();
  EXPECT_THAT(*ledger, IsEmpty());
}

TEST(UploadLedger, TornLastLineIsIgnored) {
  TempDir dir;
  Append(dir.path(), {Record("shard_000001.safetensors", 10, "0000000a", true)});
  const std::string whole = ReadBytes(dir.File("uploads.jsonl"));
  WriteBytes(dir.File("uploads.jsonl"), whole + "{\"file\":\"shard_000002.safet");
  auto ledger = UploadLedger::Read(dir.path());
  ASSERT_TRUE(ledger.has_value()) << ledger.error();
  ASSERT_EQ(ledger->size(), 1u);
  EXPECT_TRUE(ledger->contains("shard_000001.safetensors"));
}

// After a crash tore the last line, the next run appends again: its records must
// not be glued onto the torn fragment (and so lost, or make the ledger unreadable).
TEST(UploadLedger, AppendAfterATornLineIsReadBack) {
  TempDir dir;
  Append(dir.path(), {Record("shard_000001.safetensors", 10, "0000000a", true)});
  const std::string whole = ReadBytes(dir.File("uploads.jsonl"));
  WriteBytes(dir.File("uploads.jsonl"), whole + "{\"file\":\"shard_000002.safet");
  Append(dir.path(), {Record("shard_000002.safetensors", 20, "00000014", true),
                      Record("shard_000003.safetensors", 30, "0000001e", true)});
  auto ledger = UploadLedger::Read(dir.path());
  ASSERT_TRUE(ledger.has_value()) << ledger.error();
  EXPECT_EQ(ledger->size(), 3u);
  EXPECT_TRUE(ledger->contains("shard_000002.safetensors"));
  EXPECT_TRUE(ledger->contains("shard_000003.safetensors"));
}

TEST(UploadLedger, MalformedLineBeforeTheLastIsRefusedNamingIt) {
  TempDir dir;
  const std::string good =
      "{\"file\":\"shard_000001.safetensors\",\"bytes\":10,\"crc32\":\"0000000a\","
      "\"deleted\":true}\n";
  WriteBytes(dir.File("uploads.jsonl"), good + "{\"file\":\"shard_000002.safetensors\"}\n" + good);
  auto ledger = UploadLedger::Read(dir.path());
  ASSERT_FALSE(ledger.has_value());
  EXPECT_THAT(ledger.error(), AllOf(HasSubstr(dir.File("uploads.jsonl") + " line 2 "),
                                    HasSubstr("is not an upload record")));
}

// json::value would throw on a field of another type; the ledger must refuse it.
TEST(UploadLedger, FieldOfAnotherTypeIsRefusedNotThrown) {
  TempDir dir;
  WriteBytes(dir.File("uploads.jsonl"),
             "{\"file\":\"shard_000001.safetensors\",\"bytes\":10,\"crc32\":\"0000000a\","
             "\"deleted\":\"yes\"}\n"
             "{\"file\":\"metadata.json\",\"bytes\":10,\"crc32\":\"0000000a\"}\n");
  auto ledger = UploadLedger::Read(dir.path());
  ASSERT_FALSE(ledger.has_value());
  EXPECT_THAT(ledger.error(), HasSubstr("uploads.jsonl line 1 is not an upload record"));
}

TEST(UploadLedger, OnlyADeletedUploadOfTheListedBytesAndCrcVouchesForAMissingShard) {
  const std::map<std::string, UploadRecord> ledger = {
      {"shard_000001.safetensors", Record("shard_000001.safetensors", 10, "0000000a", true)},
      {"shard_000002.safetensors", Record("shard_000002.safetensors", 20, "00000014", false)}};
  EXPECT_TRUE(UploadedAndDeleted(ledger, "shard_000001.safetensors", 10, "0000000a"));
  EXPECT_FALSE(UploadedAndDeleted(ledger, "shard_000001.safetensors", 11, "0000000a"));
  EXPECT_FALSE(UploadedAndDeleted(ledger, "shard_000001.safetensors", 10, "0000000b"));
  EXPECT_FALSE(UploadedAndDeleted(ledger, "shard_000002.safetensors", 20, "00000014"));
  EXPECT_TRUE(UploadVouched(ledger, "shard_000002.safetensors", 20, "00000014"));
  EXPECT_FALSE(UploadedAndDeleted(ledger, "shard_000003.safetensors", 10, "0000000a"));
}

TEST(UploadLedger, Crc32HexIsZlibsCrcInLowercaseHex) {
  EXPECT_EQ(Crc32Hex("123456789"), "cbf43926");  // the CRC-32 check value
  EXPECT_EQ(Crc32Hex(""), "00000000");
}

TEST(UploadLedger, FilesNotUploadedListsWhatTheLedgerDoesNotVouchFor) {
  TempDir dir;
  const std::vector<StoredSite> sites = {{"blocks.0.hook_resid_post", 4}};
  ShardWriterOptions options;
  options.dir = dir.path();
  options.shard_bytes = 1;  // a shard per document
  options.sites = sites;
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer.has_value()) << writer.error();
  for (int64_t doc_id : {0, 1}) {
    ASSERT_TRUE(AddWhole(**writer, MakeDocument(doc_id, 3, sites)).has_value());
  }
  ASSERT_TRUE((*writer)->Finish().has_value());
  const ListedShard first = (*writer)->listed_shard(0);
  Append(dir.path(), {Record(first.file, first.bytes, first.crc32, true)});
  auto missing = FilesNotUploaded(dir.path());
  ASSERT_TRUE(missing.has_value()) << missing.error();
  EXPECT_THAT(*missing, ElementsAre("shard_000002.safetensors", "metadata.json"));

  const ListedShard second = (*writer)->listed_shard(1);
  const std::string metadata = ReadBytes(dir.File("metadata.json"));
  Append(dir.path(), {Record(second.file, second.bytes, second.crc32, false),
                      Record("metadata.json", static_cast<int64_t>(metadata.size()),
                             Crc32Hex(metadata), false)});
  missing = FilesNotUploaded(dir.path());
  ASSERT_TRUE(missing.has_value()) << missing.error();
  EXPECT_THAT(*missing, IsEmpty());
}

TEST(UploadLedger, AShardsExamplesFileIsUploadedLikeTheShard) {
  TempDir dir;
  auto writer = ShardWriter::Open(LatentWriterOptions(dir.path(), int64_t{1} << 30));
  ASSERT_TRUE(writer) << writer.error();
  ASSERT_TRUE(AddWhole(**writer, MakeLatentDocument(0, 3)));
  ASSERT_TRUE((*writer)->Finish());
  const std::vector<ListedShard> files = (*writer)->listed_files(0);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].file, "shard_000001.examples.safetensors");
  Append(dir.path(), {Record(files[0].file, files[0].bytes, files[0].crc32, true)});
  auto missing = FilesNotUploaded(dir.path());
  ASSERT_TRUE(missing) << missing.error();
  EXPECT_THAT(*missing, ElementsAre("shard_000001.examples.safetensors", "metadata.json"));
}

}  // namespace
}  // namespace actex
