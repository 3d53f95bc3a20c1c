#include "actors/sequence_packer.h"

#include <gtest/gtest.h>

#include <numeric>

namespace actex {
namespace {

std::vector<int32_t> Tokens(int count) {
  std::vector<int32_t> tokens(count);
  std::iota(tokens.begin(), tokens.end(), 100);
  return tokens;
}

TEST(SequencePacker, TruncatesLongDocumentToMaxSeqLen) {
  SequencePacker packer({.max_seq_len = 4, .overflow = Overflow::kTruncate, .batch_tokens = 100});
  EXPECT_TRUE(packer.Add(7, Tokens(10)).empty());
  auto batch = packer.Flush();
  ASSERT_TRUE(batch);
  ASSERT_EQ(batch->sequences.size(), 1u);
  EXPECT_EQ(batch->sequences[0].doc_id, 7);
  EXPECT_EQ(batch->sequences[0].length, 4);
  EXPECT_TRUE(batch->sequences[0].last_of_document);
  EXPECT_EQ(batch->token_ids, (std::vector<int32_t>{100, 101, 102, 103}));
}

TEST(SequencePacker, SplitsLongDocumentIntoWindowsWithDocumentOffsets) {
  SequencePacker packer({.max_seq_len = 4, .overflow = Overflow::kSplit, .batch_tokens = 100});
  packer.Add(3, Tokens(10));
  auto batch = packer.Flush();
  ASSERT_TRUE(batch);
  ASSERT_EQ(batch->sequences.size(), 3u);
  EXPECT_EQ(batch->sequences[1].doc_offset, 4);
  EXPECT_EQ(batch->sequences[2].doc_offset, 8);
  EXPECT_EQ(batch->sequences[2].length, 2);
  EXPECT_FALSE(batch->sequences[1].last_of_document);
  EXPECT_TRUE(batch->sequences[2].last_of_document);
  EXPECT_EQ(batch->token_ids, Tokens(10));
}

TEST(SequencePacker, NeverCutsASequenceAtABatchBorder) {
  SequencePacker packer({.max_seq_len = 8, .overflow = Overflow::kTruncate, .batch_tokens = 10});
  EXPECT_TRUE(packer.Add(0, Tokens(6)).empty());
  auto completed = packer.Add(1, Tokens(6));
  ASSERT_EQ(completed.size(), 1u);
  EXPECT_EQ(completed[0].token_ids.size(), 6u);
  EXPECT_EQ(completed[0].batch_id, 0);
  auto last = packer.Flush();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->batch_id, 1);
  EXPECT_EQ(last->sequences[0].doc_id, 1);
}

TEST(SequencePacker, EmitsFullBatchAsSoonAsItIsFull) {
  SequencePacker packer({.max_seq_len = 8, .overflow = Overflow::kTruncate, .batch_tokens = 8});
  auto completed = packer.Add(0, Tokens(8));
  ASSERT_EQ(completed.size(), 1u);
  EXPECT_FALSE(packer.Flush());
}

TEST(SequencePacker, SequenceLongerThanBatchTravelsAlone) {
  SequencePacker packer({.max_seq_len = 64, .overflow = Overflow::kTruncate, .batch_tokens = 8});
  packer.Add(0, Tokens(3));
  auto completed = packer.Add(1, Tokens(20));
  ASSERT_EQ(completed.size(), 2u);
  EXPECT_EQ(completed[0].token_ids.size(), 3u);
  EXPECT_EQ(completed[1].token_ids.size(), 20u);
  EXPECT_EQ(packer.batches_emitted(), 2);
}

}  // namespace
}  // namespace actex
