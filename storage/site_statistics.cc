#include "storage/site_statistics.h"

#include <algorithm>
#include <cmath>

namespace actex {

SiteStatistics::SiteStatistics(int width, double threshold)
    : width_(width),
      threshold_(threshold),
      sum_(static_cast<size_t>(width), 0.0),
      sum_squares_(static_cast<size_t>(width), 0.0) {}

void SiteStatistics::AddRows(const float* rows, int64_t count) {
  double* sum = sum_.data();
  double* sum_squares = sum_squares_.data();
  // The row's squared norm and max |value| in kLanes independent partial results, so
  // that the loop vectorizes instead of waiting on one running sum.
  constexpr int kLanes = 8;
  for (int64_t r = 0; r < count; ++r) {
    const float* row = rows + r * width_;
    double partial[kLanes] = {};
    float partial_max[kLanes] = {};
    int d = 0;
    for (; d + kLanes <= width_; d += kLanes) {
      for (int k = 0; k < kLanes; ++k) {
        const double value = row[d + k];
        sum[d + k] += value;
        sum_squares[d + k] += value * value;
        partial[k] += value * value;
        const float magnitude = std::fabs(row[d + k]);
        partial_max[k] = magnitude > partial_max[k] ? magnitude : partial_max[k];
      }
    }
    for (; d < width_; ++d) {
      const double value = row[d];
      sum[d] += value;
      sum_squares[d] += value * value;
      partial[0] += value * value;
      partial_max[0] = std::max(partial_max[0], std::fabs(row[d]));
    }
    double squared_norm = 0;
    float max_abs = 0;
    for (int k = 0; k < kLanes; ++k) {
      squared_norm += partial[k];
      max_abs = std::max(max_abs, partial_max[k]);
    }
    sum_norms_ += std::sqrt(squared_norm);
    sum_squared_norms_ += squared_norm;
    max_abs_ = std::max(max_abs_, static_cast<double>(max_abs));
    rows_over_ += max_abs > threshold_;
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
    if (static_cast<int>(stats.sum_.size()) != stats.width_ ||
        stats.sum_squares_.size() != stats.sum_.size() || stats.count_ < 0) {
      return std::unexpected(std::string("statistics: sums do not match the width"));
    }
    return stats;
  } catch (const nlohmann::json::exception& error) {
    return std::unexpected(std::string("statistics are malformed: ") + error.what());
  }
}

}  // namespace actex
