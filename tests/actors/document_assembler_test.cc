#include "actors/document_assembler.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

struct Collected {
  int64_t doc_id;
  std::vector<int32_t> token_ids, positions;
  std::vector<float> values;
};

DocumentAssembler::Sink CollectInto(std::vector<Collected>* documents) {
  return [documents](const DocumentActivations& document) -> std::expected<void, std::string> {
    documents->push_back({document.doc_id,
                          {document.token_ids.begin(), document.token_ids.end()},
                          {document.positions.begin(), document.positions.end()},
                          {document.sites[0].begin(), document.sites[0].end()}});
    return {};
  };
}

ActivationBatchMessage Batch(std::vector<SequenceInfo> sequences, std::vector<int32_t> ids) {
  ActivationBatchMessage batch;
  batch.sequences = std::move(sequences);
  batch.token_ids = std::move(ids);
  return batch;
}

TEST(DocumentAssembler, PassesWholeDocumentsWithTheirRows) {
  DocumentAssembler assembler({2});
  std::vector<Collected> documents;
  std::vector<float> site = {0, 1, 2, 3, 4, 5};  // [3 tokens, 2]
  auto batch = Batch({{5, 0, 1, true}, {6, 0, 2, true}}, {10, 11, 12});
  ASSERT_TRUE(assembler.AddBatch(batch, {site}, CollectInto(&documents)));
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents[1].doc_id, 6);
  EXPECT_EQ(documents[1].token_ids, (std::vector<int32_t>{11, 12}));
  EXPECT_EQ(documents[1].positions, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(documents[1].values, (std::vector<float>{2, 3, 4, 5}));
  EXPECT_TRUE(assembler.idle());
}

TEST(DocumentAssembler, JoinsWindowsOfASplitDocumentAcrossBatches) {
  DocumentAssembler assembler({1});
  std::vector<Collected> documents;
  std::vector<float> first = {1, 2}, second = {3};
  ASSERT_TRUE(
      assembler.AddBatch(Batch({{9, 0, 2, false}}, {40, 41}), {first}, CollectInto(&documents)));
  EXPECT_TRUE(documents.empty());
  EXPECT_FALSE(assembler.idle());
  ASSERT_TRUE(
      assembler.AddBatch(Batch({{9, 2, 1, true}}, {42}), {second}, CollectInto(&documents)));
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(documents[0].positions, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(documents[0].values, (std::vector<float>{1, 2, 3}));
}

TEST(DocumentAssembler, RefusesWindowsOutOfOrder) {
  DocumentAssembler assembler({1});
  std::vector<Collected> documents;
  std::vector<float> rows = {1};
  auto added = assembler.AddBatch(Batch({{9, 5, 1, true}}, {42}), {rows}, CollectInto(&documents));
  ASSERT_FALSE(added);
  EXPECT_NE(added.error().find("out of order"), std::string::npos);
}

TEST(DocumentAssembler, RefusesSiteOfWrongSize) {
  DocumentAssembler assembler({4});
  std::vector<Collected> documents;
  std::vector<float> rows = {1, 2};
  EXPECT_FALSE(assembler.AddBatch(Batch({{1, 0, 1, true}}, {3}), {rows}, CollectInto(&documents)));
}

}  // namespace
}  // namespace actex
