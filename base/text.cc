#include "base/text.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace actex {

std::string DescribeJson(const nlohmann::json& value) {
  constexpr size_t kMaxShownElements = 16;
  constexpr size_t kMaxShownBytes = 200;
  bool flat = value.is_primitive();
  if (value.is_array() && value.size() <= kMaxShownElements) {
    flat = std::all_of(value.begin(), value.end(),
                       [](const nlohmann::json& element) { return element.is_primitive(); });
  }
  if (!flat) {
    return (value.is_array() ? "an array of " : "an object of ") + std::to_string(value.size()) +
           (value.is_array() ? " elements" : " members");
  }
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true);
  if (text.size() > kMaxShownBytes) text.replace(kMaxShownBytes, std::string::npos, "...");
  return text;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string BytesText(double bytes) {
  constexpr std::array<const char*, 6> kUnits = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < kUnits.size()) {
    bytes /= 1024;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.3g %s", bytes, kUnits[unit]);
  return text;
}

}  // namespace actex
