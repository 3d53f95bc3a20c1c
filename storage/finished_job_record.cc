#include "storage/finished_job_record.h"

#include <spdlog/fmt/fmt.h>

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/whole_file.h"
#include "storage/file_io.h"
#include "storage/host_folder_files.h"
#include "storage/json_field.h"

namespace actex {
namespace {

std::string UtcNowText() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string RecordPath(const std::string& folder) {
  return (std::filesystem::path(folder) / kFinishedJobFile).string();
}

}  // namespace

std::expected<void, std::string> WriteFinishedJobRecord(const std::string& folder,
                                                        const FinishedJobRecord& record) {
  const nlohmann::json json = {{"fingerprint", record.fingerprint},
                               {"hosts", record.hosts},
                               {"progress", record.progress},
                               {"finished_at", UtcNowText()}};
  return WriteFileAtomically(RecordPath(folder), json.dump(2) + "\n", nullptr);
}

std::expected<std::optional<FinishedJobRecord>, std::string> ReadFinishedJobRecord(
    const std::string& folder) {
  const std::string path = RecordPath(folder);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  auto text = ReadWholeFile(path);
  if (!text) return std::unexpected(text.error());
  const auto json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  const JsonPlace top{.file = path, .path = ""};
  if (!json.is_object()) return std::unexpected(JsonTypeError(top, &json, "an object"));
  FinishedJobRecord record;
  auto fingerprint = JsonObjectField(json, top, "fingerprint");
  if (!fingerprint) return std::unexpected(fingerprint.error());
  for (const auto& [key, value] : fingerprint->get().items()) {
    auto text_value = JsonString(value, top.Member("fingerprint").Member(key));
    if (!text_value) return std::unexpected(text_value.error());
    record.fingerprint[key] = std::move(*text_value);
  }
  auto hosts = JsonIntField(json, top, "hosts", 1);
  if (!hosts) return std::unexpected(hosts.error());
  record.hosts = static_cast<int>(*hosts);
  auto progress = JsonStringField(json, top, "progress");
  if (!progress) return std::unexpected(progress.error());
  record.progress = std::move(*progress);
  auto finished_at = JsonStringField(json, top, "finished_at");
  if (!finished_at) return std::unexpected(finished_at.error());
  record.finished_at = std::move(*finished_at);
  return record;
}

}  // namespace actex
