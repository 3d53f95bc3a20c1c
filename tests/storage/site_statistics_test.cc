// SiteStatistics and the statistics ShardWriter records in metadata.json: equal to
// a direct computation over the rows, mergeable exactly, and after a resume
// covering exactly the listed shards.
#include "storage/site_statistics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

const std::vector<StoredSite> kSites = {{"blocks.0.hook_resid_post", 5}};

std::vector<float> Rows(int64_t first_doc, int docs, int* count) {
  std::vector<float> rows;
  *count = 0;
  for (int64_t doc = first_doc; doc < first_doc + docs; ++doc) {
    OwnedDocument document = MakeDocument(doc, 3 + doc % 4, kSites);
    rows.insert(rows.end(), document.sites[0].begin(), document.sites[0].end());
    *count += static_cast<int>(document.token_ids.size());
  }
  return rows;
}

TEST(SiteStatistics, EqualsADirectComputation) {
  int count = 0;
  std::vector<float> rows = Rows(0, 20, &count);
  rows[7] = -1500.0f;  // one row over the threshold
  SiteStatistics stats(5);
  stats.AddRows(rows.data(), count);
  double sum_norms = 0, sum_squared_norms = 0, max_abs = 0;
  std::vector<double> mean(5, 0), variance(5, 0);
  for (int r = 0; r < count; ++r) {
    double squared = 0;
    for (int d = 0; d < 5; ++d) {
      const double v = rows[r * 5 + d];
      mean[d] += v / count;
      squared += v * v;
      max_abs = std::max(max_abs, std::fabs(v));
    }
    sum_norms += std::sqrt(squared);
    sum_squared_norms += squared;
  }
  for (int r = 0; r < count; ++r) {
    for (int d = 0; d < 5; ++d) variance[d] += std::pow(rows[r * 5 + d] - mean[d], 2) / count;
  }
  EXPECT_EQ(stats.count(), count);
  for (int d = 0; d < 5; ++d) {
    EXPECT_NEAR(stats.Mean()[d], mean[d], 1e-12 * (1 + std::fabs(mean[d])));
    EXPECT_NEAR(stats.Variance()[d], variance[d], 1e-9 * variance[d]);
  }
  EXPECT_NEAR(stats.MeanNorm(), sum_norms / count, 1e-12 * sum_norms);
  EXPECT_NEAR(stats.MeanSquaredNorm(), sum_squared_norms / count, 1e-12 * sum_squared_norms);
  EXPECT_EQ(stats.max_abs(), 1500.0);
  EXPECT_EQ(stats.rows_over_threshold(), 1);
  EXPECT_NEAR(stats.NormalizationFactor(), std::sqrt(5.0) / (sum_norms / count), 1e-12);
}

TEST(SiteStatistics, MergedPartsEqualTheWholeAndSurviveJson) {
  int count = 0;
  const std::vector<float> rows = Rows(0, 30, &count);
  SiteStatistics whole(5), first(5), second(5);
  whole.AddRows(rows.data(), count);
  first.AddRows(rows.data(), 17);
  second.AddRows(rows.data() + 17 * 5, count - 17);
  auto restored = SiteStatistics::FromJson(first.ToJson());
  ASSERT_TRUE(restored.has_value()) << restored.error();
  restored->Merge(second);
  EXPECT_EQ(restored->count(), whole.count());
  for (int d = 0; d < 5; ++d) EXPECT_NEAR(restored->Mean()[d], whole.Mean()[d], 1e-12);
  EXPECT_DOUBLE_EQ(restored->MeanSquaredNorm(), whole.MeanSquaredNorm());
  EXPECT_FALSE(SiteStatistics::FromJson({{"width", 2}}).has_value());
}

nlohmann::json Metadata(const std::string& dir) {
  return nlohmann::json::parse(ReadBytes(dir + "/metadata.json"));
}

// Shards of about 200 bytes in `dir`/host_00.
ShardWriterOptions SmallShards(const TempDir& dir) {
  ShardWriterOptions options;
  options.dir = dir.File("host_00");
  options.shard_bytes = 200;
  options.sites = kSites;
  return options;
}

TEST(ShardWriterStatistics, CoverExactlyTheListedShardsAcrossAResume) {
  TempDir dir;
  ShardWriterOptions options = SmallShards(dir);
  {
    auto writer = ShardWriter::Open(options);
    ASSERT_TRUE(writer.has_value());
    for (int64_t doc = 0; doc < 9; ++doc) {
      ASSERT_TRUE(AddWhole(**writer, MakeDocument(doc, 3 + doc % 4, kSites)).has_value());
    }
    // No Finish: a crash. The statistics cover the listed shards only.
  }
  nlohmann::json crashed = Metadata(options.dir);
  const auto& listed = crashed["statistics"]["blocks.0.hook_resid_post"];
  EXPECT_EQ(listed["count"], crashed["totals"]["tokens"]);
  const int64_t listed_docs = crashed["shards"].back()["last_doc_id"].get<int64_t>() + 1;
  ASSERT_LT(listed_docs, 9);
  options.continue_from = crashed;
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer.has_value());
  for (int64_t doc = listed_docs; doc < 12; ++doc) {
    ASSERT_TRUE(AddWhole(**writer, MakeDocument(doc, 3 + doc % 4, kSites)).has_value());
  }
  ASSERT_TRUE((*writer)->Finish().has_value());
  int count = 0;
  const std::vector<float> rows = Rows(0, 12, &count);
  SiteStatistics expected(5);
  expected.AddRows(rows.data(), count);
  auto recorded = SiteStatistics::FromJson(Metadata(options.dir)["statistics"][kSites[0].name]);
  ASSERT_TRUE(recorded.has_value()) << recorded.error();
  EXPECT_EQ(recorded->count(), count);
  for (int d = 0; d < 5; ++d) EXPECT_NEAR(recorded->Mean()[d], expected.Mean()[d], 1e-12);
  EXPECT_NEAR(recorded->MeanSquaredNorm(), expected.MeanSquaredNorm(), 1e-12);
}

TEST(ShardWriterStatistics, ContinuingAnOutputWithoutThemRecordsNone) {
  TempDir dir;
  ShardWriterOptions options = SmallShards(dir);
  {
    auto writer = ShardWriter::Open(options);
    ASSERT_TRUE(writer.has_value());
    ASSERT_TRUE(AddWhole(**writer, MakeDocument(0, 20, kSites)).has_value());
  }
  nlohmann::json older = Metadata(options.dir);
  older.erase("statistics");
  options.continue_from = older;
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer.has_value());
  ASSERT_TRUE(AddWhole(**writer, MakeDocument(1, 20, kSites)).has_value());
  ASSERT_TRUE((*writer)->Finish().has_value());
  EXPECT_TRUE(Metadata(options.dir)["statistics"].is_null());
}

}  // namespace
}  // namespace actex
