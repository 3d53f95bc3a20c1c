#include "storage/sae_record.h"

namespace actex {
namespace {

constexpr size_t kShortDigest = 12;

std::expected<SaeRecord, std::string> ReadSaeRecord(const nlohmann::json& entry,
                                                    const JsonPlace& place) {
  SaeRecord record;
  for (auto [key, field] :
       {std::pair{"site", &record.site}, std::pair{"dir", &record.dir},
        std::pair{"format", &record.format}, std::pair{"architecture", &record.architecture}}) {
    auto text = JsonStringField(entry, place, key);
    if (!text) return std::unexpected(text.error());
    *field = *text;
  }
  for (auto [key, field] : {std::pair{"d_in", &record.d_in}, std::pair{"d_sae", &record.d_sae},
                            std::pair{"k", &record.k}}) {
    auto number = JsonIntField(entry, place, key, 1);
    if (!number) return std::unexpected(number.error());
    *field = *number;
  }
  auto files = JsonObjectField(entry, place, "files");
  if (!files) return std::unexpected(files.error());
  for (const auto& [name, digest] : files->get().items()) {
    auto text = JsonString(digest, place.Member("files").Member(name));
    if (!text) return std::unexpected(text.error());
    record.files[name] = *text;
  }
  return record;
}

}  // namespace

nlohmann::json SaeRecordJson(const SaeRecord& record) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [name, digest] : record.files) files[name] = digest;
  return {{"site", record.site},     {"dir", record.dir},
          {"format", record.format}, {"architecture", record.architecture},
          {"d_in", record.d_in},     {"d_sae", record.d_sae},
          {"k", record.k},           {"files", files}};
}

std::expected<std::vector<SaeRecord>, std::string> ReadSaeRecords(const nlohmann::json& config,
                                                                  const JsonPlace& place) {
  std::vector<SaeRecord> records;
  if (!config.is_object() || !config.contains(kSaesConfigKey)) return records;
  auto entries = JsonArrayField(config, place, kSaesConfigKey);
  if (!entries) return std::unexpected(entries.error());
  for (size_t i = 0; i < entries->get().size(); ++i) {
    auto record = ReadSaeRecord(entries->get()[i], place.Member(kSaesConfigKey).Element(i));
    if (!record) return std::unexpected(record.error());
    records.push_back(std::move(*record));
  }
  return records;
}

std::string DescribeSaeRecord(const SaeRecord& record) {
  std::string files;
  for (const auto& [name, digest] : record.files) {
    files += (files.empty() ? "" : ", ") + name + " " + digest.substr(0, kShortDigest);
  }
  return record.site + ": " + record.format + " " + record.architecture + " " +
         std::to_string(record.d_in) + " -> " + std::to_string(record.d_sae) + ", K " +
         std::to_string(record.k) + (record.dir.empty() ? "" : ", " + record.dir) + " (" + files +
         ")";
}

}  // namespace actex
