// ReadEarlierOutput on folders written by ShardWriter: a listed shard may be missing
// only when uploads.jsonl vouches that it was uploaded as listed and then deleted.
#include "storage/earlier_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "storage/output_folder.h"
#include "storage/shard_writer.h"
#include "storage/unlisted_shards.h"
#include "storage/upload_ledger.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const std::vector<StoredSite> kSites = {{"blocks.0.hook_resid_post", 4}};

// Three shards of one document each (doc ids 0, 1, 2), unfinished like a run that
// stopped; returns how metadata.json lists them.
std::vector<ListedShard> WriteUnfinishedRun(const std::string& dir) {
  ShardWriterOptions options;
  options.dir = dir;
  options.shard_bytes = 1;
  options.sites = kSites;
  auto writer = ShardWriter::Open(options);
  EXPECT_TRUE(writer.has_value()) << writer.error();
  if (!writer) return {};
  for (int64_t doc_id = 0; doc_id < 3; ++doc_id) {
    EXPECT_TRUE(AddWhole(**writer, MakeDocument(doc_id, 2, kSites)).has_value());
  }
  std::vector<ListedShard> listed;
  for (int64_t i = 0; i < (*writer)->stats().shards; ++i)
    listed.push_back((*writer)->listed_shard(i));
  return listed;
}

void AppendToLedger(const std::string& dir, const UploadRecord& record) {
  auto ledger = UploadLedger::Open(dir);
  ASSERT_TRUE(ledger.has_value()) << ledger.error();
  ASSERT_TRUE((*ledger)->Append(record).has_value());
}

TEST(EarlierOutput, FolderWithoutMetadataIsAFreshRun) {
  TempDir dir;
  auto earlier = ReadEarlierOutput(dir.path());
  ASSERT_TRUE(earlier.has_value()) << earlier.error();
  EXPECT_FALSE(earlier->has_value());
}

TEST(EarlierOutput, AcceptsADeletedShardTheLedgerVouchesFor) {
  TempDir dir;
  const std::vector<ListedShard> listed = WriteUnfinishedRun(dir.path());
  ASSERT_EQ(listed.size(), 3u);
  const ListedShard& middle = listed[1];
  AppendToLedger(dir.path(), {middle.file, middle.bytes, middle.crc32, true, 1.0});
  fs::remove(dir.File(middle.file));
  auto earlier = ReadEarlierOutput(dir.path());
  ASSERT_TRUE(earlier.has_value()) << earlier.error();
  ASSERT_TRUE(earlier->has_value());
  EXPECT_FALSE((*earlier)->complete);
  EXPECT_EQ((*earlier)->last_doc_id, 2);
  ASSERT_TRUE((*earlier)->uploads.contains(middle.file));
  EXPECT_TRUE((*earlier)->uploads.at(middle.file).deleted);
  // SetAsideUnlisted leaves the listed shards alone, present or not.
  auto cleanup = SetAsideUnlisted(dir.path(), (*earlier)->listed_files);
  ASSERT_TRUE(cleanup.has_value()) << cleanup.error();
  EXPECT_TRUE(cleanup->set_aside.empty());
  EXPECT_TRUE(cleanup->removed_tmp.empty());
  EXPECT_TRUE(fs::exists(dir.File(listed[2].file)));
}

TEST(EarlierOutput, RefusesAMissingShardTheLedgerDoesNotVouchFor) {
  struct Case {
    const char* what;
    bool record, deleted;
    int64_t extra_bytes;
    const char* crc32;  // null: the listed one
  };
  for (const Case& c :
       {Case{"no record", false, true, 0, nullptr}, Case{"not deleted", true, false, 0, nullptr},
        Case{"another crc32", true, true, 0, "00000000"},
        Case{"other bytes", true, true, 1, nullptr}}) {
    SCOPED_TRACE(c.what);
    TempDir dir;
    const std::vector<ListedShard> listed = WriteUnfinishedRun(dir.path());
    ASSERT_EQ(listed.size(), 3u);
    const ListedShard& middle = listed[1];
    // Another shard's upload, so that the ledger exists in every case.
    AppendToLedger(dir.path(), {listed[0].file, listed[0].bytes, listed[0].crc32, false, 1.0});
    if (c.record) {
      AppendToLedger(dir.path(), {middle.file, middle.bytes + c.extra_bytes,
                                  c.crc32 ? c.crc32 : middle.crc32, c.deleted, 2.0});
    }
    fs::remove(dir.File(middle.file));
    auto earlier = ReadEarlierOutput(dir.path());
    ASSERT_FALSE(earlier.has_value());
    EXPECT_THAT(earlier.error(), AllOf(HasSubstr(dir.File(middle.file)),
                                       HasSubstr("listed in metadata.json but is missing")));
  }
}

TEST(EarlierOutput, PresentShardWithAnotherSizeIsRefusedEvenIfUploaded) {
  TempDir dir;
  const std::vector<ListedShard> listed = WriteUnfinishedRun(dir.path());
  ASSERT_EQ(listed.size(), 3u);
  AppendToLedger(dir.path(), {listed[0].file, listed[0].bytes, listed[0].crc32, true, 1.0});
  fs::resize_file(dir.File(listed[0].file), static_cast<uintmax_t>(listed[0].bytes / 2));
  auto earlier = ReadEarlierOutput(dir.path());
  ASSERT_FALSE(earlier.has_value());
  EXPECT_THAT(earlier.error(), HasSubstr("has another size"));
}

TEST(EarlierOutput, DamagedLedgerIsRefusedNamingTheLine) {
  TempDir dir;
  ASSERT_EQ(WriteUnfinishedRun(dir.path()).size(), 3u);
  WriteBytes(dir.File("uploads.jsonl"), "not json\n{\"also\": \"not a record\"}\n");
  auto earlier = ReadEarlierOutput(dir.path());
  ASSERT_FALSE(earlier.has_value());
  EXPECT_THAT(earlier.error(), HasSubstr("uploads.jsonl line 1 is not an upload record"));
}

TEST(EarlierOutput, MalformedShardEntryIsRefusedRatherThanThrown) {
  TempDir dir;
  ASSERT_EQ(WriteUnfinishedRun(dir.path()).size(), 3u);
  std::ifstream in(dir.File("metadata.json"));
  auto metadata = nlohmann::json::parse(in);
  in.close();
  for (const nlohmann::json& broken :
       {nlohmann::json(7), nlohmann::json{{"file", 3}, {"bytes", 1}, {"last_doc_id", 0}},
        nlohmann::json{{"file", "shard_000001.safetensors"}, {"bytes", "many"}}}) {
    metadata["shards"][0] = broken;
    std::ofstream(dir.File("metadata.json")) << metadata.dump();
    auto earlier = ReadEarlierOutput(dir.path());
    ASSERT_FALSE(earlier.has_value()) << broken.dump();
    EXPECT_THAT(earlier.error(), HasSubstr(dir.File("metadata.json") + ": shards[0]"));
  }
}

TEST(EarlierOutput, AnOutputWithAnIntegerSiteIsContinuedAndStaysWhole) {
  TempDir dir;
  const std::vector<StoredSite> sites = {{"blocks.1.hook_resid_post", 4},
                                         {"blocks.1.mlp.hook_expert_indices", 2, true}};
  ShardWriterOptions options;
  options.dir = dir.path();
  options.shard_bytes = 1;
  options.dtype = OutputDtype::kBF16;
  options.sites = sites;
  options.run_config = {{"host_id", 0}};
  {
    auto writer = ShardWriter::Open(options);
    ASSERT_TRUE(writer.has_value()) << writer.error();
    for (int64_t doc_id = 0; doc_id < 2; ++doc_id) {
      ASSERT_TRUE(AddWhole(**writer, MakeDocument(doc_id, 3, sites)).has_value());
    }
    ASSERT_TRUE((*writer)->Finish(/*complete=*/false).has_value());
  }
  auto earlier = ReadEarlierOutput(dir.path());
  ASSERT_TRUE(earlier.has_value()) << earlier.error();
  ASSERT_TRUE(earlier->has_value());
  options.continue_from = (*earlier)->metadata;
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer.has_value()) << writer.error();
  ASSERT_TRUE(AddWhole(**writer, MakeDocument(2, 3, sites)).has_value());
  ASSERT_TRUE((*writer)->Finish().has_value());

  std::vector<VerifyFinding> faults;
  auto folder = ReadOutputFolder(dir.path(), "host_00", &faults);
  ASSERT_TRUE(folder.has_value());
  EXPECT_TRUE(faults.empty()) << faults.front().problem;
  ASSERT_EQ(folder->shards.size(), 3u);
  for (const ShardEntry& shard : folder->shards) {
    EXPECT_TRUE(CheckShard(shard).faults.empty()) << shard.path;
  }
  const auto metadata = nlohmann::json::parse(ReadBytes(dir.File("metadata.json")));
  EXPECT_EQ(metadata["sites"][1]["dtype"], "I32");
  // The float site's statistics go on over every row; the integer site has none.
  EXPECT_EQ(metadata["statistics"]["blocks.1.hook_resid_post"]["count"], 9);
  EXPECT_FALSE(metadata["statistics"].contains("blocks.1.mlp.hook_expert_indices"));
}

}  // namespace
}  // namespace actex
