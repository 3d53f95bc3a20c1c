// SumRows (storage/row_sums.h) and SiteStatistics::AddRows give, to the bit, what the
// straightforward loop below gives, the loop SiteStatistics ran before it was
// vectorized: resumed and multi-host runs compare statistics exactly, and the
// statistics of older runs are merged with new ones. Every ISA path this CPU has is
// checked, over rows holding NaN, infinities, values that overflow float16 and
// bfloat16, huge and subnormal values, at widths that are not multiples of 8 or 16.
#include "storage/row_sums.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "storage/float_convert.h"
#include "storage/site_statistics.h"

namespace actex {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kLimits[] = {kInfinity, kHalfOverflowMagnitude, kBfloat16OverflowMagnitude};
constexpr int kWidths[] = {1, 5, 7, 8, 9, 15, 16, 17, 24, 33, 100, 896, 903};

// The straightforward loop: one row at a time, one value at a time, the row's squared
// norm in eight partial sums (lane d % 8, the last width % 8 values in lane 0) added
// in lane order.
struct Reference {
  explicit Reference(int width) : width(width), sum(width), sum_squares(width) {}

  RowFigures AddRow(const float* row, float limit) {
    double partial[8] = {};
    RowFigures figures;
    const int whole = width / 8 * 8;
    for (int d = 0; d < width; ++d) {
      const float magnitude = std::fabs(row[d]);
      figures.not_below += !(magnitude < limit);
      const bool finite = magnitude <= std::numeric_limits<float>::max();
      const double value = finite ? row[d] : 0.0f;
      sum[d] += value;
      sum_squares[d] += value * value;
      partial[d < whole ? d % 8 : 0] += value * value;
      if (finite) figures.max_abs = std::max(figures.max_abs, magnitude);
    }
    for (double lane : partial) figures.squared_norm += lane;
    return figures;
  }

  int width;
  std::vector<double> sum, sum_squares;
};

// SplitMix64: the same rows on every platform and standard library.
uint64_t NextBits(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// [count, width] values of the size of activations, of which `awkward_in_64` in 64 are
// awkward: NaN, ±infinity, float16's and bfloat16's overflow edges, ±FLT_MAX, huge,
// subnormal, -0 or any bit pattern.
std::vector<float> Rows(int64_t count, int width, uint64_t seed, int awkward_in_64) {
  std::vector<float> rows(static_cast<size_t>(count * width));
  const float awkward[] = {std::numeric_limits<float>::quiet_NaN(),
                           kInfinity,
                           -kInfinity,
                           kHalfOverflowMagnitude,
                           std::nextafter(kHalfOverflowMagnitude, 0.0f),
                           -kBfloat16OverflowMagnitude,
                           std::numeric_limits<float>::max(),
                           -3e37f,
                           std::numeric_limits<float>::denorm_min(),
                           -0.0f};
  for (float& value : rows) {
    const uint64_t bits = NextBits(&seed);
    const int pick = static_cast<int>(bits % 64);
    if (pick < awkward_in_64 / 2) {
      value = awkward[(bits >> 8) % std::size(awkward)];
    } else if (pick < awkward_in_64) {
      value = std::bit_cast<float>(static_cast<uint32_t>(bits >> 32));
    } else {
      // Uniform in (-8, 8) with a full mantissa.
      value = static_cast<float>(static_cast<int64_t>(bits >> 11) - (int64_t{1} << 52)) /
              static_cast<float>(int64_t{1} << 49);
    }
  }
  return rows;
}

std::vector<VectorIsa> IsasOfThisCpu() {
  if (DetectedIsa() == VectorIsa::kAvx512) return {VectorIsa::kAvx2, VectorIsa::kAvx512};
  return {VectorIsa::kAvx2};
}

// Whether two doubles arrays hold the same bits; otherwise which index differs first.
::testing::AssertionResult SameBits(const std::vector<double>& expected,
                                    const std::vector<double>& actual) {
  if (expected.size() == actual.size() &&
      std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(double)) == 0) {
    return ::testing::AssertionSuccess();
  }
  for (size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) {
    if (std::bit_cast<uint64_t>(expected[i]) != std::bit_cast<uint64_t>(actual[i])) {
      return ::testing::AssertionFailure()
             << "index " << i << ": expected " << expected[i] << ", got " << actual[i];
    }
  }
  return ::testing::AssertionFailure() << "sizes " << expected.size() << " and " << actual.size();
}

TEST(SumRows, EveryIsaGivesTheStraightforwardLoopsBits) {
  for (VectorIsa isa : IsasOfThisCpu()) {
    for (int width : kWidths) {
      for (size_t l = 0; l < std::size(kLimits); ++l) {
        for (int awkward_in_64 : {0, 8}) {
          const float limit = kLimits[l];
          SCOPED_TRACE(std::string(IsaName(isa)) + ", width " + std::to_string(width) + ", limit " +
                       std::to_string(limit) + ", awkward " + std::to_string(awkward_in_64) +
                       " in 64");
          // An odd count: blocks of rows and a row alone; twice, so sums carry over.
          const int64_t count = 13;
          const std::vector<float> rows = Rows(2 * count, width, width * 3 + l, awkward_in_64);
          Reference reference(width);
          std::vector<double> sum(width), sum_squares(width);
          for (int64_t part = 0; part < 2; ++part) {
            const float* first = rows.data() + part * count * width;
            std::vector<RowFigures> figures(count);
            SumRows(isa, first, count, width, limit, sum.data(), sum_squares.data(),
                    figures.data());
            for (int64_t r = 0; r < count; ++r) {
              const RowFigures expected = reference.AddRow(first + r * width, limit);
              EXPECT_EQ(std::bit_cast<uint64_t>(figures[r].squared_norm),
                        std::bit_cast<uint64_t>(expected.squared_norm))
                  << "row " << r << ": " << figures[r].squared_norm << " against "
                  << expected.squared_norm;
              EXPECT_EQ(std::bit_cast<uint32_t>(figures[r].max_abs),
                        std::bit_cast<uint32_t>(expected.max_abs));
              EXPECT_EQ(figures[r].not_below, expected.not_below) << "row " << r;
            }
          }
          EXPECT_TRUE(SameBits(reference.sum, sum));
          EXPECT_TRUE(SameBits(reference.sum_squares, sum_squares));
        }
      }
    }
  }
}

constexpr int64_t kCallRows[] = {1, 600, 37, 256};  // one call longer than AddRows' block

// `rows` [sum of kCallRows, width] added in calls of kCallRows rows.
SiteStatistics AddInCalls(const std::vector<float>& rows, int width) {
  SiteStatistics statistics(width);
  const float* next = rows.data();
  for (int64_t count : kCallRows) {
    statistics.AddRows(next, count, kHalfOverflowMagnitude);
    next += count * width;
  }
  return statistics;
}

int64_t TotalRows() {
  int64_t total = 0;
  for (int64_t count : kCallRows) total += count;
  return total;
}

// Every field of AddRows' statistics against the reference's rows summed in row order.
TEST(SiteStatistics, AddRowsGivesTheStraightforwardLoopsBits) {
  for (const auto& [width, awkward_in_64] : {std::pair{9, 8}, {896, 0}, {903, 8}}) {
    SCOPED_TRACE("width " + std::to_string(width) + ", awkward " + std::to_string(awkward_in_64));
    const std::vector<float> rows = Rows(TotalRows(), width, 5, awkward_in_64);
    Reference reference(width);
    double sum_norms = 0, sum_squared_norms = 0, max_abs = 0;
    int64_t rows_over = 0, non_finite_values = 0, non_finite_rows = 0;
    for (int64_t r = 0; r < TotalRows(); ++r) {
      const RowFigures row = reference.AddRow(rows.data() + r * width, kHalfOverflowMagnitude);
      sum_norms += std::sqrt(row.squared_norm);
      sum_squared_norms += row.squared_norm;
      max_abs = std::max(max_abs, static_cast<double>(row.max_abs));
      rows_over += row.max_abs > SiteStatistics::kDefaultThreshold;
      non_finite_values += row.not_below;
      non_finite_rows += row.not_below > 0;
    }
    const SiteStatistics statistics = AddInCalls(rows, width);
    const nlohmann::json json = statistics.ToJson();
    EXPECT_TRUE(SameBits(reference.sum, json["sum"].get<std::vector<double>>()));
    EXPECT_TRUE(SameBits(reference.sum_squares, json["sum_squares"].get<std::vector<double>>()));
    EXPECT_TRUE(SameBits({sum_norms, sum_squared_norms, max_abs},
                         {json["sum_norms"].get<double>(), json["sum_squared_norms"].get<double>(),
                          statistics.max_abs()}));
    EXPECT_EQ(statistics.count(), TotalRows());
    EXPECT_EQ(statistics.rows_over_threshold(), rows_over);
    EXPECT_EQ(statistics.non_finite_values(), non_finite_values);
    EXPECT_EQ(statistics.non_finite_rows(), non_finite_rows);
  }
}

// FNV-1a over the bits of `values`.
uint64_t BitsDigest(const std::vector<double>& values, uint64_t digest = 0xcbf29ce484222325ull) {
  for (double value : values) {
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    for (int byte = 0; byte < 8; ++byte) {
      digest = (digest ^ ((bits >> (8 * byte)) & 0xff)) * 0x100000001b3ull;
    }
  }
  return digest;
}

// The figures SiteStatistics gave these rows before it was vectorized (its scalar loop
// of 2026-11-27, built with GCC 12 for x86-64-v3), so that the reference above and
// AddRows cannot drift from earlier outputs together.
TEST(SiteStatistics, AddRowsKeepsTheBitsOfEarlierReleases) {
  struct Pinned {
    int width, awkward_in_64;
    uint64_t sums_digest;  // BitsDigest of "sum", then "sum_squares"
    double sum_norms, sum_squared_norms;
  };
  for (const Pinned& pinned :
       {Pinned{9, 8, 0xf1648ee0fcf026ebull, 0x1.9be1654dc928ep+134, 0x1.9cdf636b2e7f7p+262},
        Pinned{896, 0, 0x54c37508f57606c2ull, 0x1.e31963b41964p+16, 0x1.051dc1d13e3acp+24},
        Pinned{903, 8, 0x3a03428e2c89c01cull, 0x1.75ea2d6ad9fa6p+139, 0x1.3fe3256530462p+269}}) {
    SCOPED_TRACE("width " + std::to_string(pinned.width));
    const SiteStatistics statistics =
        AddInCalls(Rows(TotalRows(), pinned.width, 5, pinned.awkward_in_64), pinned.width);
    const nlohmann::json json = statistics.ToJson();
    EXPECT_EQ(BitsDigest(json["sum_squares"].get<std::vector<double>>(),
                         BitsDigest(json["sum"].get<std::vector<double>>())),
              pinned.sums_digest);
    EXPECT_TRUE(
        SameBits({pinned.sum_norms, pinned.sum_squared_norms},
                 {json["sum_norms"].get<double>(), json["sum_squared_norms"].get<double>()}));
  }
}

}  // namespace
}  // namespace actex
