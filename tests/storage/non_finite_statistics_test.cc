// Activations that are not finite as stored (NaN weights, float16 overflowing to
// infinity): counted per site, left out of the sums so metadata.json stays valid JSON
// that a resume reads back, and the counts kept across a resume.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "storage/float_convert.h"
#include "storage/non_finite_sites.h"
#include "storage/shard_writer.h"
#include "storage/site_statistics.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(FloatConvert, OverflowMagnitudesAreWhereRoundingReachesInfinity) {
  EXPECT_EQ(FloatToHalfBits(kHalfOverflowMagnitude), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(std::nextafter(kHalfOverflowMagnitude, 0.0f)), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(-kHalfOverflowMagnitude), 0xFC00);
  EXPECT_EQ(FloatToBfloat16Bits(kBfloat16OverflowMagnitude), 0x7F80);
  EXPECT_EQ(FloatToBfloat16Bits(std::nextafter(kBfloat16OverflowMagnitude, 0.0f)), 0x7F7F);
}

// Rows of `width` values: row 0 clean, row 1 with NaN and +inf, row 2 with values
// only float16 cannot hold (70000, -65520), row 3 just inside float16 (65519).
std::vector<float> Rows(int width) {
  std::vector<float> rows(4 * width);
  for (int i = 0; i < 4 * width; ++i) rows[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  rows[1 * width + 0] = kNaN;
  rows[1 * width + width - 1] = kInf;
  rows[2 * width + 1] = 70000.0f;
  rows[2 * width + width - 1] = -65520.0f;
  rows[3 * width + 2] = 65519.0f;
  return rows;
}

class NonFiniteStatistics : public testing::TestWithParam<int> {};

TEST_P(NonFiniteStatistics, AreCountedAsStoredAndLeftOutOfTheSums) {
  const int width = GetParam();
  std::vector<float> rows = Rows(width);
  SiteStatistics as_half(width), as_float(width), cleaned(width);
  as_half.AddRows(rows.data(), 4, kHalfOverflowMagnitude);
  as_float.AddRows(rows.data(), 4);
  EXPECT_EQ(as_half.non_finite_values(), 4);
  EXPECT_EQ(as_half.non_finite_rows(), 2);
  EXPECT_EQ(as_float.non_finite_values(), 2) << "70000 is finite in float32";
  EXPECT_EQ(as_float.non_finite_rows(), 1);
  // The sums are those of the rows with NaN and infinity as 0.
  for (float& value : rows) value = std::isfinite(value) ? value : 0.0f;
  cleaned.AddRows(rows.data(), 4);
  EXPECT_EQ(cleaned.non_finite_values(), 0);
  EXPECT_EQ(as_half.Mean(), cleaned.Mean());
  EXPECT_EQ(as_half.MeanSquaredNorm(), cleaned.MeanSquaredNorm());
  EXPECT_EQ(as_half.max_abs(), 70000.0);
  EXPECT_EQ(as_half.count(), 4);

  const std::string text = as_half.ToJson().dump();
  EXPECT_THAT(text, testing::Not(testing::HasSubstr("null"))) << text;
  auto restored = SiteStatistics::FromJson(nlohmann::json::parse(text));
  ASSERT_TRUE(restored.has_value()) << restored.error();
  EXPECT_EQ(restored->non_finite_values(), 4);
  EXPECT_EQ(restored->non_finite_rows(), 2);
  restored->Merge(as_float);
  EXPECT_EQ(restored->non_finite_values(), 6);
  EXPECT_EQ(restored->non_finite_rows(), 3);
}

// Width 5 takes the loop's tail only; 11 its vector part and its tail.
INSTANTIATE_TEST_SUITE_P(Widths, NonFiniteStatistics, testing::Values(5, 11));

TEST(NonFiniteStatistics, StatisticsWrittenBeforeTheCountsReadAsNone) {
  SiteStatistics stats(3);
  const std::vector<float> row = {1, kNaN, 2};
  stats.AddRows(row.data(), 1);
  nlohmann::json older = stats.ToJson();
  older.erase("non_finite_values");
  older.erase("non_finite_rows");
  auto restored = SiteStatistics::FromJson(older);
  ASSERT_TRUE(restored.has_value()) << restored.error();
  EXPECT_EQ(restored->non_finite_values(), 0);
  nlohmann::json wrong = stats.ToJson();
  wrong["non_finite_values"] = "many";
  EXPECT_FALSE(SiteStatistics::FromJson(wrong).has_value());
  wrong = stats.ToJson();
  wrong["non_finite_rows"] = 2;  // more rows than counted
  EXPECT_FALSE(SiteStatistics::FromJson(wrong).has_value());
}

const std::vector<StoredSite> kNonFiniteCaseSites = {{"blocks.0.hook_resid_post", 5},
                                                     {"blocks.0.hook_mlp_out", 3}};

// Document `doc` with its first token's first value of the first site set to `value`.
OwnedDocument DocumentWith(int64_t doc, float value) {
  OwnedDocument document = MakeDocument(doc, 4, kNonFiniteCaseSites);
  document.sites[0][0] = value;
  return document;
}

TEST(ShardWriterNonFinite, CountsSurviveAResumeAndMetadataStaysReadable) {
  TempDir dir;
  ShardWriterOptions options;
  options.dir = dir.File("host_00");
  options.shard_bytes = 100;
  options.sites = kNonFiniteCaseSites;
  options.dtype = OutputDtype::kF16;
  const std::vector<float> values = {kNaN, 1e5f, 1.0f, -kInf, 2.0f, 65504.0f, 65520.0f, 3.0f};
  int64_t resumed_at = 0;
  {
    auto writer = ShardWriter::Open(options);
    ASSERT_TRUE(writer.has_value());
    for (int64_t doc = 0; doc < 5; ++doc) {
      ASSERT_TRUE(AddWhole(**writer, DocumentWith(doc, values[doc])).has_value());
    }
    // No Finish: a crash; the listed shards' counts are in metadata.json.
  }
  const nlohmann::json crashed = nlohmann::json::parse(ReadBytes(options.dir + "/metadata.json"));
  resumed_at = crashed["shards"].back()["last_doc_id"].get<int64_t>() + 1;
  ASSERT_GE(resumed_at, 2) << "the test needs the NaN and 1e5 documents listed";
  EXPECT_EQ(crashed["statistics"][kNonFiniteCaseSites[0].name]["non_finite_values"],
            resumed_at >= 4 ? 3 : 2);
  options.continue_from = crashed;
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer.has_value()) << writer.error();
  for (int64_t doc = resumed_at; doc < static_cast<int64_t>(values.size()); ++doc) {
    ASSERT_TRUE(AddWhole(**writer, DocumentWith(doc, values[doc])).has_value());
  }
  ASSERT_TRUE((*writer)->Finish().has_value());
  // NaN, 1e5, -inf and 65520 are not finite in float16; 65504 is its largest value.
  const nlohmann::json metadata = nlohmann::json::parse(ReadBytes(options.dir + "/metadata.json"));
  const auto& site = metadata["statistics"][kNonFiniteCaseSites[0].name];
  EXPECT_EQ(site["non_finite_values"], 4);
  EXPECT_EQ(site["non_finite_rows"], 4);
  EXPECT_TRUE(site["sum"][0].is_number()) << site.dump();
  EXPECT_TRUE(site["max_abs"].is_number()) << site.dump();
  EXPECT_EQ(metadata["statistics"][kNonFiniteCaseSites[1].name]["non_finite_values"], 0);
  const auto sites = NonFiniteSites(metadata);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(DescribeNonFinite(sites), "blocks.0.hook_resid_post: 4 values in 4 rows");
  auto read = ReadNonFiniteSites(options.dir + "/metadata.json");
  ASSERT_TRUE(read.has_value()) << read.error();
  EXPECT_EQ(read->dtype, "float16");
  EXPECT_EQ(read->sites.size(), 1u);
}

TEST(NonFiniteSites, CountsOfTheWrongTypeAreIgnoredAndAMissingFileIsNamed) {
  const nlohmann::json metadata = {{"statistics",
                                    {{"a", {{"non_finite_values", "3"}, {"non_finite_rows", 1}}},
                                     {"b", {{"non_finite_values", 2}, {"non_finite_rows", 1}}},
                                     {"c", 7}}}};
  const auto sites = NonFiniteSites(metadata);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].site, "b");
  EXPECT_TRUE(NonFiniteSites(nlohmann::json::array()).empty());
  EXPECT_TRUE(NonFiniteSites({{"statistics", nullptr}}).empty());
  auto missing = ReadNonFiniteSites("/no/such/metadata.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error(), testing::HasSubstr("/no/such/metadata.json"));
}

}  // namespace
}  // namespace actex
