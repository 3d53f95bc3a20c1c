#include "storage/reject_reasons.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "storage/line_reader.h"

namespace actex {
namespace {

// Longer lines are not a reject entry actex wrote (reasons are cut short).
constexpr int64_t kMaxRejectLineBytes = int64_t{1} << 20;

}  // namespace

std::string RejectReasonKind(const std::string& reason) {
  const std::string head = reason.substr(0, reason.find(": "));
  std::string kind;
  for (size_t i = 0; i < head.size();) {
    const bool starts_number = std::isdigit(static_cast<unsigned char>(head[i])) &&
                               (i == 0 || !(std::isalpha(static_cast<unsigned char>(head[i - 1])) ||
                                            head[i - 1] == '-' || head[i - 1] == '_'));
    if (!starts_number) {
      kind += head[i++];
      continue;
    }
    while (i < head.size() && std::isdigit(static_cast<unsigned char>(head[i]))) ++i;
    kind += 'N';
  }
  return kind;
}

std::expected<RejectReasons, std::string> TallyRejectReasons(const std::string& path,
                                                             size_t most_common) {
  RejectReasons reasons;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return reasons;
  auto reader = LineReader::Open(path, kMaxRejectLineBytes);
  if (!reader) return std::unexpected(reader.error());
  // kind -> (position first seen, its entry)
  std::map<std::string, std::pair<size_t, RejectReasons::Kind>> kinds;
  while (true) {
    auto line = (*reader)->Next();
    if (!line) return std::unexpected(line.error());
    if (!line->has_value()) break;
    if ((*line)->too_long) continue;
    const auto entry = nlohmann::json::parse((*line)->text, nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object()) continue;
    const auto reason = entry.find("reason");
    if (reason == entry.end() || !reason->is_string()) continue;
    ++reasons.total;
    const std::string& text = reason->get_ref<const std::string&>();
    auto [found, added] =
        kinds.try_emplace(RejectReasonKind(text), kinds.size(), RejectReasons::Kind{text, 0});
    ++found->second.second.count;
  }
  std::vector<std::pair<size_t, RejectReasons::Kind>> ordered;
  for (auto& [kind, entry] : kinds) ordered.push_back(std::move(entry));
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.second.count != b.second.count ? a.second.count > b.second.count : a.first < b.first;
  });
  for (size_t i = 0; i < ordered.size() && i < most_common; ++i) {
    reasons.kinds.push_back(std::move(ordered[i].second));
  }
  return reasons;
}

}  // namespace actex
