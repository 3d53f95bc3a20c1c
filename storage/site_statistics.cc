#include "storage/site_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace actex {

SiteStatistics::SiteStatistics(int width, double threshold)
    : width_(width),
      threshold_(threshold),
      sum_(static_cast<size_t>(width), 0.0),
      sum_squares_(static_cast<size_t>(width), 0.0) {}

namespace {

constexpr int kLanes = 8;

// Values of `row` with |value| >= `limit` or NaN, counted in kLanes independent
// partial counts so that the loop vectorizes (NaN fails every comparison).
int64_t CountNotBelow(const float* row, int width, float limit) {
  int32_t partial[kLanes] = {};
  int d = 0;
  for (; d + kLanes <= width; d += kLanes) {
    for (int k = 0; k < kLanes; ++k) partial[k] += !(std::fabs(row[d + k]) < limit);
  }
  for (; d < width; ++d) partial[0] += !(std::fabs(row[d]) < limit);
  int64_t count = 0;
  for (int k = 0; k < kLanes; ++k) count += partial[k];
  return count;
}

// Adds `row` to the per-dimension sums; returns its squared norm and max |value|.
// kSkipNonFinite: NaN and infinity count as 0 (only rows that hold one pay for it).
template <bool kSkipNonFinite>
std::pair<double, float> AddRow(const float* row, int width, double* sum, double* sum_squares) {
  // The row's squared norm and max |value| in kLanes independent partial results, so
  // that the loop vectorizes instead of waiting on one running sum.
  double partial[kLanes] = {};
  float partial_max[kLanes] = {};
  auto add = [&](int d, int lane) {
    float raw = row[d];
    if constexpr (kSkipNonFinite) {
      raw = std::fabs(raw) <= std::numeric_limits<float>::max() ? raw : 0.0f;
    }
    const double value = raw;
    sum[d] += value;
    sum_squares[d] += value * value;
    partial[lane] += value * value;
    const float magnitude = std::fabs(raw);
    partial_max[lane] = magnitude > partial_max[lane] ? magnitude : partial_max[lane];
  };
  int d = 0;
  for (; d + kLanes <= width; d += kLanes) {
    for (int k = 0; k < kLanes; ++k) add(d + k, k);
  }
  for (; d < width; ++d) add(d, 0);
  double squared_norm = 0;
  float max_abs = 0;
  for (int k = 0; k < kLanes; ++k) {
    squared_norm += partial[k];
    max_abs = std::max(max_abs, partial_max[k]);
  }
  return {squared_norm, max_abs};
}

}  // namespace

void SiteStatistics::AddRows(const float* rows, int64_t count, float overflow_magnitude) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < count; ++r) {
    const float* row = rows + r * width_;
    // Not finite as stored; of those, not finite in float32 (the same for float32 output).
    const int64_t non_finite = CountNotBelow(row, width_, overflow_magnitude);
    const int64_t non_finite_float = non_finite == 0 || overflow_magnitude == kInfinity
                                         ? non_finite
                                         : CountNotBelow(row, width_, kInfinity);
    const auto [squared_norm, max_abs] =
        non_finite_float == 0 ? AddRow<false>(row, width_, sum_.data(), sum_squares_.data())
                              : AddRow<true>(row, width_, sum_.data(), sum_squares_.data());
    sum_norms_ += std::sqrt(squared_norm);
    sum_squared_norms_ += squared_norm;
    max_abs_ = std::max(max_abs_, static_cast<double>(max_abs));
    rows_over_ += max_abs > threshold_;
    non_finite_values_ += non_finite;
    non_finite_rows_ += non_finite > 0;
  }
  count_ += count;
}

void SiteStatistics::Merge(const SiteStatistics& other) {
  for (int d = 0; d < width_; ++d) {
    sum_[d] += other.sum_[d];
    sum_squares_[d] += other.sum_squares_[d];
  }
  count_ += other.count_;
  sum_norms_ += other.sum_norms_;
  sum_squared_norms_ += other.sum_squared_norms_;
  max_abs_ = std::max(max_abs_, other.max_abs_);
  rows_over_ += other.rows_over_;
  non_finite_values_ += other.non_finite_values_;
  non_finite_rows_ += other.non_finite_rows_;
}

std::vector<double> SiteStatistics::Mean() const {
  std::vector<double> mean(sum_.size(), 0.0);
  for (size_t d = 0; count_ > 0 && d < sum_.size(); ++d) mean[d] = sum_[d] / count_;
  return mean;
}

std::vector<double> SiteStatistics::Variance() const {
  std::vector<double> variance = Mean();
  for (size_t d = 0; count_ > 0 && d < sum_.size(); ++d) {
    variance[d] = std::max(0.0, sum_squares_[d] / count_ - variance[d] * variance[d]);
  }
  return variance;
}

double SiteStatistics::MeanNorm() const { return count_ > 0 ? sum_norms_ / count_ : 0.0; }
double SiteStatistics::MeanSquaredNorm() const {
  return count_ > 0 ? sum_squared_norms_ / count_ : 0.0;
}
double SiteStatistics::NormalizationFactor() const {
  return MeanNorm() > 0 ? std::sqrt(static_cast<double>(width_)) / MeanNorm() : 0.0;
}

nlohmann::json SiteStatistics::ToJson() const {
  return {{"width", width_},
          {"count", count_},
          {"sum", sum_},
          {"sum_squares", sum_squares_},
          {"sum_norms", sum_norms_},
          {"sum_squared_norms", sum_squared_norms_},
          {"max_abs", max_abs_},
          {"threshold", threshold_},
          {"rows_over_threshold", rows_over_},
          {"non_finite_values", non_finite_values_},
          {"non_finite_rows", non_finite_rows_},
          {"mean_squared_norm", MeanSquaredNorm()},
          {"normalization_factor", NormalizationFactor()}};
}

std::expected<SiteStatistics, std::string> SiteStatistics::FromJson(const nlohmann::json& json) {
  try {
    SiteStatistics stats(json.at("width").get<int>(), json.at("threshold").get<double>());
    stats.count_ = json.at("count").get<int64_t>();
    stats.sum_ = json.at("sum").get<std::vector<double>>();
    stats.sum_squares_ = json.at("sum_squares").get<std::vector<double>>();
    stats.sum_norms_ = json.at("sum_norms").get<double>();
    stats.sum_squared_norms_ = json.at("sum_squared_norms").get<double>();
    stats.max_abs_ = json.at("max_abs").get<double>();
    stats.rows_over_ = json.at("rows_over_threshold").get<int64_t>();
    // Absent in statistics written before they were counted: none were counted then.
    stats.non_finite_values_ = json.value("non_finite_values", int64_t{0});
    stats.non_finite_rows_ = json.value("non_finite_rows", int64_t{0});
    if (static_cast<int>(stats.sum_.size()) != stats.width_ ||
        stats.sum_squares_.size() != stats.sum_.size() || stats.count_ < 0 ||
        stats.non_finite_values_ < 0 || stats.non_finite_rows_ < 0 ||
        stats.non_finite_rows_ > stats.count_) {
      return std::unexpected(
          std::string("statistics: sums do not match the width, or a count is out of range"));
    }
    return stats;
  } catch (const nlohmann::json::exception& error) {
    return std::unexpected(std::string("statistics are malformed: ") + error.what());
  }
}

}  // namespace actex
