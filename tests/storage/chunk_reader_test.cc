#include "storage/chunk_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "tests/support/test_files.h"

namespace actex {
namespace {

// Ten documents, the fifth a blank line (rejected, still with its id).
std::string TenDocuments(const TempDir& dir) {
  const std::string path = dir.File("corpus.jsonl");
  std::ofstream file(path);
  for (int doc = 0; doc < 10; ++doc) {
    file << (doc == 4 ? "" : "{\"text\": \"document " + std::to_string(doc) + "\"}") << "\n";
  }
  return path;
}

struct ReadChunk {
  std::vector<int64_t> doc_ids;
  std::vector<std::string> texts;
  int64_t documents = 0;
};

ReadChunk Read(ChunkReader& reader, int64_t chunk) {
  ReadChunk read;
  EXPECT_TRUE(reader.Seek(chunk));
  while (true) {
    auto record = reader.Next();
    EXPECT_TRUE(record) << record.error();
    if (!record || !*record) break;
    read.doc_ids.push_back((*record)->doc_id);
    read.texts.push_back((*record)->reject_reason.empty() ? (*record)->text : "rejected");
  }
  read.documents = reader.chunk_documents();
  return read;
}

TEST(ChunkReader, ChunksReadInAnyOrderHoldWhatTheyHoldReadInOrder) {
  TempDir dir;
  CorpusOptions corpus;
  corpus.inputs = {TenDocuments(dir)};
  auto in_order = ChunkReader::Open(corpus, *ChunkRule::Of(3));
  ASSERT_TRUE(in_order) << in_order.error();
  std::vector<ReadChunk> expected;
  for (int64_t chunk = 0; chunk < 4; ++chunk) expected.push_back(Read(**in_order, chunk));
  EXPECT_EQ(expected[1].doc_ids, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(expected[1].texts[1], "rejected");
  EXPECT_EQ(expected[3].doc_ids, (std::vector<int64_t>{9}));
  EXPECT_EQ(expected[3].documents, 1) << "the corpus ends inside chunk 3";
  EXPECT_EQ((*in_order)->corpus_documents(), 10);

  auto granted = ChunkReader::Open(corpus, *ChunkRule::Of(3));
  ASSERT_TRUE(granted) << granted.error();
  EXPECT_EQ((*granted)->corpus_documents(), std::nullopt);
  for (int64_t chunk : {2, 0, 3, 1}) {
    const ReadChunk read = Read(**granted, chunk);
    EXPECT_EQ(read.doc_ids, expected[chunk].doc_ids) << "chunk " << chunk;
    EXPECT_EQ(read.texts, expected[chunk].texts) << "chunk " << chunk;
    EXPECT_EQ(read.documents, expected[chunk].documents) << "chunk " << chunk;
  }
  const ReadChunk past_the_end = Read(**granted, 5);
  EXPECT_TRUE(past_the_end.doc_ids.empty());
  EXPECT_EQ(past_the_end.documents, 0);
}

}  // namespace
}  // namespace actex
