#include "storage/chunk_digest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/support/parquet_test_writer.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

CorpusRecord Text(int64_t doc_id, std::string text) {
  CorpusRecord record;
  record.doc_id = doc_id;
  record.text = std::move(text);
  return record;
}

std::string DigestOf(const std::vector<CorpusRecord>& records) {
  ChunkDigest digest;
  for (const CorpusRecord& record : records) digest.Add(record);
  return digest.Hex();
}

// Twelve text documents, one per line, the sixth a blank line (rejected).
std::string TwelveLines(const std::vector<int>& order = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) {
  std::string corpus;
  for (int doc : order) {
    corpus += doc == 5 ? "\n" : "{\"text\": \"document " + std::to_string(doc) + "\"}\n";
  }
  return corpus;
}

// The digests the loader lists for each chunk `chunks` cuts.
std::map<int64_t, std::string> ListedDigests(const std::string& path, ChunkRule chunks) {
  CorpusOptions options;
  options.inputs = {path};
  auto reader = CorpusReader::Open(options);
  EXPECT_TRUE(reader) << reader.error();
  std::map<int64_t, ChunkDigest> digests;
  while (reader) {
    auto record = (*reader)->Next();
    EXPECT_TRUE(record) << record.error();
    if (!record || !*record) break;
    digests[chunks.ChunkOf((*record)->doc_id)].Add(**record);
  }
  std::map<int64_t, std::string> listed;
  for (const auto& [chunk, digest] : digests) listed[chunk] = digest.Hex();
  return listed;
}

TEST(ChunkDigest, IsThirtyTwoHexDigitsFixedByTheRecordsAndTheirOrder) {
  const std::string digest = DigestOf({Text(0, "a"), Text(1, "b")});
  EXPECT_THAT(digest, ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(DigestOf({Text(0, "a"), Text(1, "b")}), digest);
  EXPECT_NE(DigestOf({Text(0, "b"), Text(1, "a")}), digest) << "swapped texts";
  EXPECT_NE(DigestOf({Text(0, "ab"), Text(1, "")}), digest) << "a moved boundary";
  EXPECT_NE(DigestOf({Text(1, "a"), Text(2, "b")}), digest) << "other doc ids";
  EXPECT_NE(DigestOf({}), digest);
}

TEST(ChunkDigest, TellsTextFromTokenIdsFromRejectsButNotOneReasonFromAnother) {
  CorpusRecord ids;
  ids.doc_id = 0;
  ids.pretokenized = true;
  ids.input_ids = {97};  // the bytes of "a" and three zeros
  CorpusRecord text = Text(0, std::string("a\0\0\0", 4));
  EXPECT_NE(DigestOf({ids}), DigestOf({text}));
  CorpusRecord blank = Text(0, "");
  blank.reject_reason = "blank line";
  CorpusRecord not_json = Text(0, "");
  not_json.reject_reason = "invalid JSON: reworded in another version";
  EXPECT_EQ(DigestOf({blank}), DigestOf({not_json}));
  EXPECT_NE(DigestOf({blank}), DigestOf({Text(0, "")}));
}

TEST(ChunkDigest, HexLeavesTheDigestOpenForMoreRecords) {
  ChunkDigest digest;
  digest.Add(Text(0, "a"));
  const std::string first = digest.Hex();
  EXPECT_EQ(digest.Hex(), first);
  digest.Add(Text(1, "b"));
  EXPECT_EQ(digest.Hex(), DigestOf({Text(0, "a"), Text(1, "b")}));
  digest.Reset();
  EXPECT_EQ(digest.Hex(), DigestOf({}));
}

TEST(FindChangedChunks, AnUnchangedCorpusHasNone) {
  TempDir dir;
  const std::string path = dir.File("corpus.jsonl");
  WriteBytes(path, TwelveLines());
  CorpusOptions options;
  options.inputs = {path};
  auto changed =
      FindChangedChunks(options, *ChunkRule::Of(4), ListedDigests(path, *ChunkRule::Of(4)));
  ASSERT_TRUE(changed) << changed.error();
  EXPECT_TRUE(changed->empty());
}

TEST(FindChangedChunks, LinesReorderedInsideTheSameBytesAreFoundWithTheirFileAndLines) {
  TempDir dir;
  const std::string path = dir.File("corpus.jsonl");
  WriteBytes(path, TwelveLines());
  const std::map<int64_t, std::string> listed = ListedDigests(path, *ChunkRule::Of(4));
  // Lines 7 and 8 swap: the file keeps its size, chunk 1 (lines 5-8) reads otherwise.
  WriteBytes(path, TwelveLines({0, 1, 2, 3, 4, 5, 7, 6, 8, 9, 10, 11}));
  CorpusOptions options;
  options.inputs = {path};
  auto changed = FindChangedChunks(options, *ChunkRule::Of(4), listed);
  ASSERT_TRUE(changed) << changed.error();
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ((*changed)[0].chunk, 1);
  EXPECT_EQ((*changed)[0].where, "lines 5-8 of " + path);
  EXPECT_EQ((*changed)[0].listed, listed.at(1));
  EXPECT_NE((*changed)[0].now, listed.at(1));
  EXPECT_THAT(DescribeChangedChunks("out/host_00", *changed),
              HasSubstr("chunk 1 (lines 5-8 of " + path + ") reads differently now"));
}

TEST(FindChangedChunks, OnlyListedChunksAreComparedAndAChunkPastTheEndIsGone) {
  TempDir dir;
  const std::string path = dir.File("corpus.jsonl");
  WriteBytes(path, TwelveLines());
  std::map<int64_t, std::string> listed = ListedDigests(path, *ChunkRule::Of(4));
  listed.erase(0);
  listed[7] = listed.at(2);  // a chunk the corpus no longer reaches
  WriteBytes(path, TwelveLines({1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));  // chunk 0 changed
  CorpusOptions options;
  options.inputs = {path};
  auto changed = FindChangedChunks(options, *ChunkRule::Of(4), listed);
  ASSERT_TRUE(changed) << changed.error();
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ((*changed)[0].chunk, 7);
  EXPECT_TRUE((*changed)[0].now.empty());
  EXPECT_THAT(DescribeChangedChunks("out/host_00", *changed), HasSubstr("is gone"));
}

TEST(FindChangedChunks, ParquetRowsReorderedAreFoundByRow) {
  TempDir dir;
  const std::string path = dir.File("corpus.parquet");
  std::vector<std::optional<std::string>> rows;
  for (int row = 0; row < 40; ++row) rows.push_back("row " + std::to_string(row));
  test_support::ParquetWriteOptions writing;
  writing.rows_per_group = 10;
  WriteBytes(path, test_support::ParquetWithText(rows, "text", writing));
  const std::map<int64_t, std::string> listed = ListedDigests(path, *ChunkRule::Of(8));
  std::swap(rows[25], rows[26]);  // chunk 3: doc ids 24-31, rows 25-32
  WriteBytes(path, test_support::ParquetWithText(rows, "text", writing));
  CorpusOptions options;
  options.inputs = {path};
  auto changed = FindChangedChunks(options, *ChunkRule::Of(8), listed);
  ASSERT_TRUE(changed) << changed.error();
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ((*changed)[0].chunk, 3);
  EXPECT_EQ((*changed)[0].where, "lines 25-32 of " + path);
}

TEST(FindChangedChunks, AnUnreadableCorpusIsAnError) {
  CorpusOptions options;
  options.inputs = {"/nonexistent/corpus.jsonl"};
  auto changed = FindChangedChunks(options, *ChunkRule::Of(4), {{0, std::string(32, '0')}});
  ASSERT_FALSE(changed);
  EXPECT_THAT(changed.error(), HasSubstr("/nonexistent/corpus.jsonl"));
}

}  // namespace
}  // namespace actex
