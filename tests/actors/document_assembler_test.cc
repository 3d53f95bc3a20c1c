#include "actors/document_assembler.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

struct Collected {
  int64_t doc_id;
  std::vector<int32_t> token_ids, positions;
  std::vector<float> values;      // site 0's
  std::vector<int32_t> integers;  // site 1's, when there is an integer site 1
};

DocumentAssembler::Sink CollectInto(std::vector<Collected>* documents) {
  return [documents](const DocumentActivations& document) -> std::expected<void, std::string> {
    const std::span<const int32_t> integers =
        document.sites.size() > 1 ? document.sites[1].integers : std::span<const int32_t>();
    documents->push_back({document.doc_id,
                          {document.token_ids.begin(), document.token_ids.end()},
                          {document.positions.begin(), document.positions.end()},
                          {document.sites[0].values.begin(), document.sites[0].values.end()},
                          {integers.begin(), integers.end()}});
    return {};
  };
}

// One float site of `width`.
std::vector<StoredSite> FloatSite(int width) { return {{"blocks.0.hook_resid_post", width}}; }

ActivationBatchMessage Batch(std::vector<SequenceInfo> sequences, std::vector<int32_t> ids) {
  ActivationBatchMessage batch;
  batch.sequences = std::move(sequences);
  batch.token_ids = std::move(ids);
  return batch;
}

TEST(DocumentAssembler, PassesWholeDocumentsWithTheirRows) {
  DocumentAssembler assembler(FloatSite(2));
  std::vector<Collected> documents;
  std::vector<float> site = {0, 1, 2, 3, 4, 5};  // [3 tokens, 2]
  auto batch = Batch({{5, 0, 1, true}, {6, 0, 2, true}}, {10, 11, 12});
  ASSERT_TRUE(assembler.AddBatch(batch, {SiteRows(site)}, CollectInto(&documents)));
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents[1].doc_id, 6);
  EXPECT_EQ(documents[1].token_ids, (std::vector<int32_t>{11, 12}));
  EXPECT_EQ(documents[1].positions, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(documents[1].values, (std::vector<float>{2, 3, 4, 5}));
  EXPECT_TRUE(assembler.idle());
}

TEST(DocumentAssembler, JoinsWindowsOfASplitDocumentAcrossBatches) {
  DocumentAssembler assembler(FloatSite(1));
  std::vector<Collected> documents;
  std::vector<float> first = {1, 2}, second = {3};
  ASSERT_TRUE(assembler.AddBatch(Batch({{9, 0, 2, false}}, {40, 41}), {SiteRows(first)},
                                 CollectInto(&documents)));
  EXPECT_TRUE(documents.empty());
  EXPECT_FALSE(assembler.idle());
  ASSERT_TRUE(assembler.AddBatch(Batch({{9, 2, 1, true}}, {42}), {SiteRows(second)},
                                 CollectInto(&documents)));
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(documents[0].positions, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(documents[0].values, (std::vector<float>{1, 2, 3}));
}

TEST(DocumentAssembler, JoinsAnIntegerSiteBesideAFloatSiteAsInt32) {
  // expert ids [tokens, top_k = 2] beside a float site of width 1: each keeps its type.
  DocumentAssembler assembler(
      {{"blocks.0.hook_resid_post", 1}, {"blocks.0.mlp.hook_expert_indices", 2, true}});
  std::vector<Collected> documents;
  std::vector<float> first = {0.5f, 1.5f}, second = {2.5f};
  std::vector<int32_t> first_ids = {7, 3, 0, 5}, second_ids = {63, 1};
  ASSERT_TRUE(assembler.AddBatch(Batch({{9, 0, 2, false}}, {40, 41}),
                                 {SiteRows(first), SiteRows(first_ids)}, CollectInto(&documents)));
  ASSERT_TRUE(assembler.AddBatch(Batch({{9, 2, 1, true}}, {42}),
                                 {SiteRows(second), SiteRows(second_ids)},
                                 CollectInto(&documents)));
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(documents[0].values, (std::vector<float>{0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(documents[0].integers, (std::vector<int32_t>{7, 3, 0, 5, 63, 1}));
}

TEST(DocumentAssembler, RefusesWindowsOutOfOrder) {
  DocumentAssembler assembler(FloatSite(1));
  std::vector<Collected> documents;
  std::vector<float> rows = {1};
  auto added =
      assembler.AddBatch(Batch({{9, 5, 1, true}}, {42}), {SiteRows(rows)}, CollectInto(&documents));
  ASSERT_FALSE(added);
  EXPECT_NE(added.error().find("out of order"), std::string::npos);
}

TEST(DocumentAssembler, RefusesSiteOfWrongSize) {
  DocumentAssembler assembler(FloatSite(4));
  std::vector<Collected> documents;
  std::vector<float> rows = {1, 2};
  EXPECT_FALSE(
      assembler.AddBatch(Batch({{1, 0, 1, true}}, {3}), {SiteRows(rows)}, CollectInto(&documents)));
}

}  // namespace
}  // namespace actex
