#include "storage/upload_ledger.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/host_folder_files.h"
#include "storage/json_field.h"
#include "storage/shard_listing.h"

namespace actex {

struct UploadLedger::State {
  std::string path;
  ScopedFd fd;
};

UploadLedger::UploadLedger() : state_(std::make_unique<State>()) {}
UploadLedger::~UploadLedger() = default;

std::expected<std::map<std::string, UploadRecord>, std::string> UploadLedger::Read(
    const std::string& dir) {
  const std::string path = dir + "/" + kUploadLedgerFile;
  std::map<std::string, UploadRecord> records;
  std::ifstream file(path);
  if (!file) return records;
  std::string line, next;
  int64_t number = 0;
  bool more = static_cast<bool>(std::getline(file, line));
  while (more) {
    ++number;
    more = static_cast<bool>(std::getline(file, next));
    const bool last = !more;
    auto entry = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool valid = entry.is_object() && entry.contains("file") && entry["file"].is_string() &&
                       entry.contains("bytes") && entry["bytes"].is_number_integer() &&
                       entry.contains("crc32") && entry["crc32"].is_string() &&
                       (!entry.contains("deleted") || entry["deleted"].is_boolean()) &&
                       (!entry.contains("unix_seconds") || entry["unix_seconds"].is_number());
    if (!valid) {
      if (last) break;  // torn by a crash while appending
      return std::unexpected(path + " line " + std::to_string(number) +
                             " is not an upload record; the ledger was damaged (remove the " +
                             "line to upload that file again)");
    }
    UploadRecord record;
    record.file = entry["file"].get<std::string>();
    record.bytes = entry["bytes"].get<int64_t>();
    record.crc32 = entry["crc32"].get<std::string>();
    record.deleted = entry.value("deleted", false);
    record.unix_seconds = entry.value("unix_seconds", 0.0);
    records[record.file] = record;
    line = std::move(next);
  }
  return records;
}

std::expected<std::unique_ptr<UploadLedger>, std::string> UploadLedger::Open(
    const std::string& dir) {
  if (auto made = MakeDirectories(dir); !made) return std::unexpected(made.error());
  const std::string path = dir + "/" + kUploadLedgerFile;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(OsError("cannot open upload ledger", path, errno));
  ScopedFd guard(fd);
  if (auto dropped = DropTornLastLine(fd, path); !dropped) return std::unexpected(dropped.error());
  std::unique_ptr<UploadLedger> ledger(new UploadLedger());
  ledger->state_->path = path;
  ledger->state_->fd = std::move(guard);
  return ledger;
}

std::expected<void, std::string> UploadLedger::Append(const UploadRecord& record) {
  nlohmann::ordered_json entry = {{"file", record.file},
                                  {"bytes", record.bytes},
                                  {"crc32", record.crc32},
                                  {"deleted", record.deleted},
                                  {"unix_seconds", record.unix_seconds}};
  const std::string text = entry.dump() + "\n";
  if (auto written = WriteAll(state_->fd.get(), text.data(), text.size(), state_->path, nullptr);
      !written) {
    return written;
  }
  return SyncFile(state_->fd.get(), state_->path);
}

bool UploadVouched(const std::map<std::string, UploadRecord>& ledger, const std::string& file,
                   int64_t bytes, const std::string& crc32) {
  auto found = ledger.find(file);
  return found != ledger.end() && found->second.bytes == bytes && found->second.crc32 == crc32;
}

bool UploadedAndDeleted(const std::map<std::string, UploadRecord>& ledger, const std::string& file,
                        int64_t bytes, const std::string& crc32) {
  return UploadVouched(ledger, file, bytes, crc32) && ledger.at(file).deleted;
}

std::expected<std::vector<std::string>, std::string> ListedShardsNotUploaded(
    const nlohmann::json& metadata, const std::map<std::string, UploadRecord>& ledger) {
  if (!metadata.is_object() || !metadata.contains("shards") || !metadata["shards"].is_array()) {
    return std::unexpected("not an actex metadata.json");
  }
  std::vector<std::string> missing;
  const nlohmann::json& shards = metadata["shards"];
  for (size_t i = 0; i < shards.size(); ++i) {
    const JsonPlace place{"metadata.json", "shards[" + std::to_string(i) + "]"};
    auto files = ListedFilesOf(shards[i], place);  // the shard and its examples file
    if (!files) return std::unexpected(files.error());
    for (const auto& [name, bytes, crc32] : *files) {
      if (!UploadVouched(ledger, name, bytes, crc32)) missing.push_back(name);
    }
  }
  return missing;
}

std::expected<std::vector<std::string>, std::string> FilesNotUploaded(const std::string& dir) {
  auto ledger = UploadLedger::Read(dir);
  if (!ledger) return std::unexpected(ledger.error());
  auto vouched = [&](const std::string& name, const std::string& contents) {
    return UploadVouched(*ledger, name, static_cast<int64_t>(contents.size()), Crc32Hex(contents));
  };
  const auto contents = ReadWholeFile(dir + "/metadata.json");
  const auto missing = ListedShardsNotUploaded(
      nlohmann::json::parse(contents.value_or(""), nullptr, /*allow_exceptions=*/false), *ledger);
  if (!missing) return std::unexpected(dir + "/metadata.json: " + missing.error());
  std::vector<std::string> files = *missing;
  if (auto rejects = ReadWholeFile(dir + "/rejects.jsonl");
      rejects && !vouched("rejects.jsonl", *rejects)) {
    files.push_back("rejects.jsonl");
  }
  if (!vouched("metadata.json", *contents)) files.push_back("metadata.json");
  return files;
}

}  // namespace actex
