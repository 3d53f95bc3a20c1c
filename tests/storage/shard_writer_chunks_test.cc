// How ShardWriter lays chunks into shards: a shard closes only where a chunk ends,
// a chunk lower than the open shards starts its own, one never ended is dropped at
// Finish, one whose documents were all rejected is listed, and a chunk is taken once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <vector>

#include "storage/shard_listing.h"
#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/shard_writer_checks.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

using writer_test::CheckListedShards;
using writer_test::ChunksOf;
using writer_test::kWriterSites;
using writer_test::OpenOrDie;
using writer_test::Options;

TEST(ShardWriter, ClosesAShardOnlyWhereAChunkEnds) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  options.chunks = *ChunkRule::Of(3);
  options.shard_bytes = 68 * 2;  // reached by the first document
  auto writer = OpenOrDie(options);
  ASSERT_TRUE(writer->Add(MakeDocument(0, 2, kWriterSites).View()));
  ASSERT_TRUE(writer->Add(MakeDocument(1, 2, kWriterSites).View()));
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 0u);  // chunk 0 is still open
  ASSERT_TRUE(writer->EndChunk(0, 3));                       // document 2 was rejected
  nlohmann::json metadata = ReadMetadata(dir.path());
  ASSERT_EQ(metadata["shards"].size(), 1u);
  EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[0, 3]]"));
  EXPECT_EQ(metadata["shards"][0]["docs"], 2);
  ASSERT_TRUE(
      writer->Add(MakeDocument(9, 1, kWriterSites).View()));  // chunk 3: 1 and 2 went elsewhere
  ASSERT_TRUE(writer->EndChunk(3, 3));
  ASSERT_TRUE(writer->Finish());
  metadata = ReadMetadata(dir.path());
  EXPECT_EQ(metadata["shards"][1]["chunks"], nlohmann::json::parse("[[3, 3]]"));
  EXPECT_EQ(metadata["chunks_without_documents"], nlohmann::json::array());
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{0, 1, 9}));
  EXPECT_EQ(writer->listed_chunks(), (std::set<int64_t>{0, 3}));
}

// In a leased job a lost host's chunk can come to a writer after higher chunks: it goes
// to a shard of its own, so each shard's doc ids still increase.
TEST(ShardWriter, StartsAShardForAChunkLowerThanTheOpenShards) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(2, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(6, 2, kWriterSites).View()));  // chunk 3
  ASSERT_TRUE(writer->EndChunk(3, 1));
  ASSERT_TRUE(writer->Add(MakeDocument(2, 2, kWriterSites).View()));  // chunk 1, given back
  ASSERT_TRUE(writer->Add(MakeDocument(3, 1, kWriterSites).View()));
  ASSERT_TRUE(writer->EndChunk(1, 2));
  ASSERT_TRUE(writer->Add(MakeDocument(8, 1, kWriterSites).View()));  // chunk 4: same shard as 1
  ASSERT_TRUE(writer->EndChunk(4, 1));
  ASSERT_TRUE(writer->Finish());
  const nlohmann::json metadata = ReadMetadata(dir.path());
  ASSERT_EQ(metadata["shards"].size(), 2u);
  EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[3, 1]]"));
  EXPECT_EQ(metadata["shards"][1]["chunks"], nlohmann::json::parse("[[1, 2], [4, 1]]"));
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{6, 2, 3, 8}));
  EXPECT_EQ(writer->listed_chunks(), (std::set<int64_t>{1, 3, 4}));
}

TEST(ShardWriter, FinishDropsTheChunkThatNeverEnded) {
  for (bool gzip : {false, true}) {
    TempDir dir;
    ShardWriterOptions options = Options(dir.path());
    options.chunks = *ChunkRule::Of(2);
    options.gzip = gzip;
    auto writer = OpenOrDie(options);
    ASSERT_TRUE(writer->Add(MakeDocument(0, 3, kWriterSites).View()));
    ASSERT_TRUE(writer->Add(MakeDocument(1, 2, kWriterSites).View()));
    ASSERT_TRUE(writer->EndChunk(0, 2));
    ASSERT_TRUE(writer->Add(MakeDocument(2, 4, kWriterSites).View()));  // chunk 1 never ends
    ASSERT_TRUE(writer->Finish(/*complete=*/false));
    const nlohmann::json metadata = ReadMetadata(dir.path());
    EXPECT_EQ(metadata["complete"], false);
    ASSERT_EQ(metadata["shards"].size(), 1u);
    EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[0, 2]]"));
    EXPECT_EQ(metadata["totals"]["tokens"], 5);
    // The statistics count the rows written, not those of the dropped document.
    EXPECT_EQ(metadata["statistics"]["blocks.0.hook_resid_post"]["count"], 5);
    EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{0, 1}));
    const std::string first = gzip ? "shard_000001.safetensors.gz" : "shard_000001.safetensors";
    EXPECT_EQ(DirectoryEntries(dir.path()), (std::set<std::string>{first, "metadata.json"}));
  }
  // An input said to be complete must have ended every chunk.
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(2, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(0, 1, kWriterSites).View()));
  auto finished = writer->Finish(/*complete=*/true);
  ASSERT_FALSE(finished);
  EXPECT_THAT(finished.error(), HasSubstr("ended inside chunk 0, which was not listed"));
  EXPECT_EQ(ReadMetadata(dir.path())["complete"], false);
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 0u);
}

// stats().chunk_docs counts the listed chunks' documents, the rejected ones too: what
// a lost host still answers for (a monitor's count of it).
TEST(ShardWriter, ListsChunksWhoseDocumentsWereAllRejected) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(2, dir.path()));
  ASSERT_TRUE(writer->EndChunk(0, 2));  // no shard open: it rides with the next one
  ASSERT_TRUE(writer->Add(MakeDocument(2, 1, kWriterSites).View()));
  ASSERT_TRUE(writer->EndChunk(1, 2));
  EXPECT_EQ(writer->stats().chunk_docs, 0) << "nothing listed yet";
  ASSERT_TRUE(writer->Finish());
  EXPECT_EQ(writer->stats().docs, 1);
  EXPECT_EQ(writer->stats().chunk_docs, 4);
  nlohmann::json metadata = ReadMetadata(dir.path());
  EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[0, 2], [1, 2]]"));
  ShardWriterOptions resumed = ChunksOf(2, dir.path());
  resumed.continue_from = metadata;
  EXPECT_EQ(OpenOrDie(resumed)->stats().chunk_docs, 4) << "an earlier run's chunks count";

  TempDir only_rejects;
  writer = OpenOrDie(Options(only_rejects.path()));
  ASSERT_TRUE(writer->EndChunk(5, 1));
  ASSERT_TRUE(writer->Finish());
  EXPECT_EQ(writer->stats().chunk_docs, 1);
  metadata = ReadMetadata(only_rejects.path());
  EXPECT_EQ(metadata["shards"].size(), 0u);
  EXPECT_EQ(metadata["chunks_without_documents"], nlohmann::json::parse("[[5, 1]]"));
  EXPECT_EQ(ListedChunks(metadata), (std::map<int64_t, int64_t>{{5, 1}}));
}

TEST(ShardWriter, RefusesAChunkTwiceAndAnotherChunkWhileOneIsOpen) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(4, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(4, 1, kWriterSites).View()));
  auto other = writer->Add(MakeDocument(8, 1, kWriterSites).View());
  ASSERT_FALSE(other);
  EXPECT_THAT(other.error(), HasSubstr("document 8 belongs to chunk 2, but chunk 1 has not ended"));
  auto wrong_end = writer->EndChunk(2, 4);
  ASSERT_FALSE(wrong_end);
  EXPECT_THAT(wrong_end.error(), HasSubstr("chunk 2 ended while chunk 1 is open"));
  auto too_many = writer->EndChunk(1, 5);
  ASSERT_FALSE(too_many);
  EXPECT_THAT(too_many.error(), HasSubstr("5 documents, not 1 to the chunk size 4"));
  ASSERT_TRUE(writer->EndChunk(1, 4));
  auto again = writer->Add(MakeDocument(5, 1, kWriterSites).View());
  ASSERT_FALSE(again);
  EXPECT_THAT(again.error(), HasSubstr("its chunk 1 was listed or ended already"));
  ASSERT_FALSE(writer->EndChunk(1, 4));
  ASSERT_TRUE(writer->Finish());

  // A resumed run refuses what the earlier one listed.
  ShardWriterOptions resumed = ChunksOf(4, dir.path());
  resumed.continue_from = ReadMetadata(dir.path());
  writer = OpenOrDie(resumed);
  auto listed = writer->Add(MakeDocument(6, 1, kWriterSites).View());
  ASSERT_FALSE(listed);
  EXPECT_THAT(listed.error(), HasSubstr("its chunk 1 was listed or ended already"));
  ASSERT_TRUE(writer->Add(MakeDocument(0, 1, kWriterSites).View()));  // chunk 0 was never seen
}

}  // namespace
}  // namespace actex
