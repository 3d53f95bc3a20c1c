#include "storage/chunk_rule.h"

#include <gtest/gtest.h>

#include <vector>

namespace actex {
namespace {

TEST(ChunkRule, RefusesChunksOfNoDocument) {
  for (int64_t docs : {0, -3}) {
    auto rule = ChunkRule::Of(docs);
    ASSERT_FALSE(rule) << docs;
    EXPECT_EQ(rule.error(), "a chunk must hold at least 1 document, not " + std::to_string(docs));
  }
  ASSERT_TRUE(ChunkRule::Of(1));
  EXPECT_EQ(ChunkRule::Of(1)->docs_per_chunk(), 1);
}

TEST(ChunkRule, DefaultDealsSingleDocuments) {
  const ChunkRule rule;  // an output written before chunks
  EXPECT_EQ(rule.docs_per_chunk(), 1);
  EXPECT_EQ(rule.ChunkOf(17), 17);
  EXPECT_EQ(rule, *ChunkRule::Of(1));
  EXPECT_NE(rule, *ChunkRule::Of(2));
}

TEST(ChunkRule, ChunkOfAndItsDocumentsAgree) {
  const ChunkRule rule = *ChunkRule::Of(4);
  EXPECT_EQ(rule.ChunkOf(0), 0);
  EXPECT_EQ(rule.ChunkOf(3), 0);
  EXPECT_EQ(rule.ChunkOf(4), 1);
  EXPECT_EQ(rule.FirstDoc(3), 12);
  EXPECT_EQ(rule.EndDoc(3), 16);
  for (int64_t doc = 0; doc < 40; ++doc) {
    const int64_t chunk = rule.ChunkOf(doc);
    EXPECT_LE(rule.FirstDoc(chunk), doc);
    EXPECT_LT(doc, rule.EndDoc(chunk));
  }
}

TEST(ChunkRule, ACorpusEndsInItsLastChunk) {
  const ChunkRule rule = *ChunkRule::Of(4);
  // Ten documents: chunks [0,4), [4,8), [8,10).
  EXPECT_EQ(rule.ChunkCount(10), 3);
  EXPECT_EQ(rule.ChunkCount(8), 2);
  EXPECT_EQ(rule.ChunkCount(0), 0);
  EXPECT_EQ(rule.DocsIn(0, 10), 4);
  EXPECT_EQ(rule.DocsIn(1, 10), 4);
  EXPECT_EQ(rule.DocsIn(2, 10), 2);
  EXPECT_EQ(rule.DocsIn(3, 10), 0) << "past the corpus's end";
}

TEST(MachineShare, OwnsEveryKthChunkFromItsOwn) {
  const MachineShare share{1, 3};
  std::vector<int64_t> owned;
  for (int64_t chunk = 0; chunk < 10; ++chunk) {
    if (share.Owns(chunk)) owned.push_back(chunk);
  }
  EXPECT_EQ(owned, (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(share.FirstChunk(), 1);
  EXPECT_EQ(share.NextChunk(4), 7);
  for (int64_t end = 0; end < 12; ++end) {
    int64_t below = 0;
    for (int64_t chunk = 0; chunk < end; ++chunk) below += share.Owns(chunk);
    EXPECT_EQ(share.ChunksBelow(end), below) << "below chunk " << end;
  }
  EXPECT_TRUE(MachineShare{}.Owns(5)) << "one machine owns every chunk";
}

TEST(ChunkRule, DocsInShareCountsWhatInShareTakes) {
  for (int64_t docs : {1, 3, 128}) {
    const ChunkRule rule = *ChunkRule::Of(docs);
    for (int64_t machine = 0; machine < 3; ++machine) {
      const MachineShare share{machine, 3};
      for (int64_t corpus : {0, 1, 2, 5, 9, 10, 11, 200, 385, 1000}) {
        int64_t counted = 0;
        for (int64_t doc = 0; doc < corpus; ++doc) counted += rule.InShare(doc, share);
        EXPECT_EQ(rule.DocsInShare(corpus, share), counted)
            << "chunks of " << docs << ", machine " << machine << " of " << corpus;
      }
    }
  }
}

TEST(ChunkRule, EveryDocumentIsInExactlyOneShare) {
  const ChunkRule rule = *ChunkRule::Of(5);
  for (int64_t doc = 0; doc < 100; ++doc) {
    int owners = 0;
    for (int64_t machine = 0; machine < 3; ++machine) owners += rule.InShare(doc, {machine, 3});
    EXPECT_EQ(owners, 1) << "document " << doc;
  }
}

}  // namespace
}  // namespace actex
