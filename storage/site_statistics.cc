#include "storage/site_statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "base/vector_isa.h"
#include "storage/json_field.h"
#include "storage/row_sums.h"

namespace actex {

namespace {

// Wider than any model's activations: a width beyond it is damage, not a site.
constexpr int64_t kMaxStatisticsWidth = int64_t{1} << 24;

}  // namespace

SiteStatistics::SiteStatistics(int width, double threshold)
    : width_(width),
      threshold_(threshold),
      sum_(static_cast<size_t>(width), 0.0),
      sum_squares_(static_cast<size_t>(width), 0.0) {}

void SiteStatistics::AddRows(const float* rows, int64_t count, float overflow_magnitude) {
  // Rows a block: their figures wait on the stack for the row-ordered sums below.
  constexpr int64_t kBlockRows = 256;
  std::array<RowFigures, kBlockRows> figures;
  for (int64_t first = 0; first < count; first += kBlockRows) {
    const int64_t block = std::min(kBlockRows, count - first);
    SumRows(ActiveIsa(), rows + first * width_, block, width_, overflow_magnitude, sum_.data(),
            sum_squares_.data(), figures.data());
    for (int64_t r = 0; r < block; ++r) {
      const auto [squared_norm, max_abs, not_finite] = figures[r];
      sum_norms_ += std::sqrt(squared_norm);
      sum_squared_norms_ += squared_norm;
      max_abs_ = std::max(max_abs_, static_cast<double>(max_abs));
      rows_over_ += max_abs > threshold_;
      non_finite_values_ += not_finite;
      non_finite_rows_ += not_finite > 0;
    }
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
  // Read from a metadata.json that may have been damaged: every field is checked for
  // its type before it is read, and the width before any vector is sized by it.
  auto fail = [](const std::string& problem) -> std::expected<SiteStatistics, std::string> {
    return std::unexpected("statistics are malformed: " + problem);
  };
  const JsonPlace place{"statistics", ""};
  // Outputs written before non-finite values were left out of the sums held null
  // there (nlohmann writes NaN and infinity as null).
  auto number = [](const nlohmann::json& value,
                   const JsonPlace& at) -> std::expected<double, std::string> {
    if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
    return JsonNumber(value, at);
  };
  if (!json.is_object()) return fail("not an object but " + DescribeJson(&json));
  auto width = JsonIntField(json, place, "width", 1);
  if (!width) return fail(width.error());
  if (*width > kMaxStatisticsWidth) {
    return fail("width " + std::to_string(*width) + " is too large");
  }
  auto threshold = json.contains("threshold") ? number(json["threshold"], place.Member("threshold"))
                                              : JsonNumberField(json, place, "threshold");
  auto count = JsonIntField(json, place, "count", 0);
  auto rows_over = JsonIntField(json, place, "rows_over_threshold", 0);
  auto sum = JsonArrayField(json, place, "sum");
  auto sum_squares = JsonArrayField(json, place, "sum_squares");
  for (const auto* error :
       {threshold ? nullptr : &threshold.error(), count ? nullptr : &count.error(),
        rows_over ? nullptr : &rows_over.error(), sum ? nullptr : &sum.error(),
        sum_squares ? nullptr : &sum_squares.error()}) {
    if (error != nullptr) return fail(*error);
  }
  SiteStatistics stats(static_cast<int>(*width), *threshold);
  stats.count_ = *count;
  stats.rows_over_ = *rows_over;
  // Absent in statistics written before they were counted: none were counted then.
  for (const auto& [key, target] : {std::pair{"non_finite_values", &stats.non_finite_values_},
                                    std::pair{"non_finite_rows", &stats.non_finite_rows_}}) {
    if (!json.contains(key)) continue;
    auto value = JsonIntField(json, place, key, 0);
    if (!value) return fail(value.error());
    *target = *value;
  }
  if (stats.non_finite_rows_ > stats.count_) {
    return fail("non_finite_rows " + std::to_string(stats.non_finite_rows_) +
                " is more than the count " + std::to_string(stats.count_));
  }
  for (const auto& [key, target] : {std::pair{"sum_norms", &stats.sum_norms_},
                                    std::pair{"sum_squared_norms", &stats.sum_squared_norms_},
                                    std::pair{"max_abs", &stats.max_abs_}}) {
    auto value = json.contains(key) ? number(json[key], place.Member(key))
                                    : JsonNumberField(json, place, key);
    if (!value) return fail(value.error());
    *target = *value;
  }
  for (const auto& [key, list, target] :
       {std::tuple{"sum", &sum->get(), &stats.sum_},
        std::tuple{"sum_squares", &sum_squares->get(), &stats.sum_squares_}}) {
    if (static_cast<int64_t>(list->size()) != *width) {
      return fail(std::string(key) + " has " + std::to_string(list->size()) +
                  " numbers, not the width " + std::to_string(*width));
    }
    for (size_t i = 0; i < list->size(); ++i) {
      auto value = number((*list)[i], place.Member(key).Element(i));
      if (!value) return fail(value.error());
      (*target)[i] = *value;
    }
  }
  return stats;
}

}  // namespace actex
