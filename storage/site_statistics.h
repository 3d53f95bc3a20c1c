#ifndef ACTEX_STORAGE_SITE_STATISTICS_H_
#define ACTEX_STORAGE_SITE_STATISTICS_H_

#include <cstdint>
#include <expected>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace actex {

// Running statistics of one site's rows (tokens), kept as sums so that merging the
// statistics of disjoint sets of rows (shards, host folders) is exact addition:
// count, per-dimension sum and sum of squares (mean, variance), the sums of the rows'
// L2 norms and squared L2 norms, the largest |value|, and how many rows hold a value
// with |value| > threshold. Sums are doubles over the float32 activations (before any
// rounding to the output dtype); a value that is NaN or infinite in float32 counts as 0
// there, so the sums stay finite numbers (valid JSON). Apart from those, the values and
// rows that are not finite as stored (NaN, or infinite once rounded to the output dtype:
// float16 overflows from 65520 up) are counted.
class SiteStatistics {
 public:
  static constexpr double kDefaultThreshold = 1000.0;
  // The overflow magnitude of float32 output: nothing finite becomes infinite.
  static constexpr float kNoOverflow = std::numeric_limits<float>::infinity();

  explicit SiteStatistics(int width = 0, double threshold = kDefaultThreshold);

  // `count` rows of `width` floats each, back to back. A value with |value| >=
  // `overflow_magnitude` (the smallest that rounds to infinity in the output dtype;
  // kNoOverflow for float32) or NaN counts as not finite as stored. Vector code
  // (row_sums.h) whose sums have the same bits on every ISA, however the rows are split
  // into calls, and as before it was vectorized.
  void AddRows(const float* rows, int64_t count, float overflow_magnitude = kNoOverflow);
  // Adds another set of rows' statistics (same width and threshold).
  void Merge(const SiteStatistics& other);

  int width() const { return width_; }
  int64_t count() const { return count_; }
  double threshold() const { return threshold_; }
  double max_abs() const { return max_abs_; }
  int64_t rows_over_threshold() const { return rows_over_; }
  // Values, and rows holding at least one, that are NaN or infinite as stored.
  int64_t non_finite_values() const { return non_finite_values_; }
  int64_t non_finite_rows() const { return non_finite_rows_; }
  std::vector<double> Mean() const;
  std::vector<double> Variance() const;  // population variance per dimension
  double MeanNorm() const;               // mean L2 norm of a row
  double MeanSquaredNorm() const;        // mean squared L2 norm of a row
  // sqrt(width) / mean L2 norm: the factor SAE trainers scale inputs by so that a
  // row's expected norm is sqrt(width).
  double NormalizationFactor() const;

  // {"width", "count", "sum": [...], "sum_squares": [...], "sum_norms",
  //  "sum_squared_norms", "max_abs", "threshold", "rows_over_threshold",
  //  "non_finite_values", "non_finite_rows", "mean_squared_norm",
  //  "normalization_factor"} (the last two for readers only). FromJson takes the
  //  non-finite counts as 0 when absent (statistics written before they existed).
  nlohmann::json ToJson() const;
  static std::expected<SiteStatistics, std::string> FromJson(const nlohmann::json& json);

 private:
  int width_ = 0;
  double threshold_ = kDefaultThreshold;
  int64_t count_ = 0;
  std::vector<double> sum_, sum_squares_;
  double sum_norms_ = 0, sum_squared_norms_ = 0;
  double max_abs_ = 0;
  int64_t rows_over_ = 0;
  int64_t non_finite_values_ = 0, non_finite_rows_ = 0;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SITE_STATISTICS_H_
