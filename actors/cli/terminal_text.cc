#include "actors/cli/terminal_text.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>

#include "base/utf8.h"

namespace actex {

std::string GroupThousands(int64_t value) {
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return negative ? "-" + grouped : grouped;
}

std::string FormatRate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "?";
  if (per_second >= 9e18) return ">9e18";
  return GroupThousands(std::llround(per_second));
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds >= 1000.0 * 86400) return ">999d";
  const int64_t whole = std::llround(seconds);
  if (whole < 60) return fmt::format("{}s", whole);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  if (whole < 86400) return fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
  return fmt::format("{}d{:02}h", whole / 86400, whole % 86400 / 3600);
}

std::string TerminalSafe(const std::string& text, size_t max_chars) {
  std::string safe;
  size_t i = 0;
  for (size_t chars = 0; i < text.size() && chars < max_chars; ++chars) {
    const size_t length = WellFormedUtf8Length(text, i);
    if (length == 0) {
      safe += '?';
      i += 1;
      continue;
    }
    const auto lead = static_cast<unsigned char>(text[i]);
    const auto second = length > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
    const bool c0_or_del = length == 1 && (lead < 0x20 || lead == 0x7F);
    const bool c1 = length == 2 && lead == 0xC2 && second < 0xA0;  // U+0080..U+009F
    if (c0_or_del || c1) {
      safe += ' ';
    } else {
      safe.append(text, i, length);
    }
    i += length;
  }
  if (i < text.size() && !safe.empty()) {
    // Show that the text was cut: replace the last character by '~'.
    while ((static_cast<unsigned char>(safe.back()) & 0xC0) == 0x80) safe.pop_back();
    safe.back() = '~';
  }
  return safe;
}

size_t DisplayWidth(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

std::string RenderRows(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<Align>& aligns) {
  std::vector<size_t> widths(aligns.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string padding(widths[c] - DisplayWidth(row[c]), ' ');
      if (c > 0) line += "  ";
      line += aligns[c] == Align::kRight ? padding + row[c] : row[c] + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace actex
