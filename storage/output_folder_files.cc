#include <algorithm>
#include <expected>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "storage/host_folder_files.h"
#include "storage/json_field.h"
#include "storage/line_reader.h"
#include "storage/output_folder.h"
#include "storage/unlisted_shards.h"

// The files of a host folder beside its metadata.json (output_folder.h): rejects.jsonl,
// and those metadata.json does not list.

namespace actex {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxRejectLineBytes = int64_t{1} << 20;
constexpr int kMaxMalformedRejectsListed = 20;

}  // namespace

std::vector<VerifyFinding> FindUnlistedFiles(const OutputFolder& folder) {
  std::set<std::string> known(folder.shard_files.begin(), folder.shard_files.end());
  for (const ShardEntry& shard : folder.shards) {
    if (shard.examples) known.insert(shard.examples->file);
  }
  known.insert(kHostFolderFiles.begin(), kHostFolderFiles.end());
  std::vector<VerifyFinding> warnings;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder.path, error)) {
    const std::string name = entry.path().filename().string();
    if (known.contains(name)) continue;
    std::string problem;
    if (IsTemporaryFileName(name)) {
      problem = "temporary file of an interrupted write; not part of the output, safe to delete";
    } else if (IsShardFileName(name)) {
      problem = "shard not listed in metadata.json, " + DescribeShardFile(entry.path().string()) +
                ": its documents are not counted. A run that stopped after writing it and "
                "before listing it leaves one; so does a metadata.json entry lost or edited "
                "away, and then this file is their only copy: restore its entry to keep it. "
                "A resume moves it into " +
                std::string(kUnlistedFolder) + "/ and computes its chunks again";
    } else if (IsExamplesFileName(name)) {
      problem =
          "latent examples of a shard not listed in metadata.json: a run that stopped "
          "after writing it and before listing its shard leaves one. A resume moves it "
          "into " +
          std::string(kUnlistedFolder) + "/ and computes its chunks again";
    } else if (name == kUnlistedFolder && entry.is_directory()) {
      problem =
          "shards a resume set aside because metadata.json did not list them; not part of the "
          "output (their chunks were computed again): delete them once the output verifies, "
          "unless metadata.json lost their entries by mistake";
    } else if (entry.is_directory()) {
      problem = "directory not written by actex";
    } else {
      problem = "file not written by actex";
    }
    warnings.push_back({folder.label + "/" + name, problem});
  }
  if (error) {
    warnings.push_back({folder.label, "cannot list the folder: " + error.message()});
  }
  std::sort(warnings.begin(), warnings.end(),
            [](const auto& a, const auto& b) { return a.file < b.file; });
  return warnings;
}

int64_t ReadRejects(const OutputFolder& folder, const std::function<void(int64_t)>& document,
                    std::vector<VerifyFinding>* faults) {
  const std::string path = folder.path + "/rejects.jsonl";
  const std::string file = folder.label + "/rejects.jsonl";
  std::error_code error;
  if (!fs::exists(path, error)) return 0;
  auto reader = LineReader::Open(path, kMaxRejectLineBytes);
  if (!reader) {
    faults->push_back({file, reader.error()});
    return 0;
  }
  int64_t entries = 0, malformed = 0;
  while (true) {
    auto line = (*reader)->Next();
    if (!line) {
      faults->push_back({file, line.error()});
      break;
    }
    if (!line->has_value()) break;
    const auto entry = (*line)->too_long ? nlohmann::json(nullptr)
                                         : nlohmann::json::parse((*line)->text, nullptr, false);
    const JsonPlace place{"", ""};  // a malformed line is named by its number
    std::expected<int64_t, std::string> doc_id = std::unexpected("not an object");
    if (entry.is_object()) doc_id = JsonIntField(entry, place, "doc_id", 0);
    if (!doc_id || !JsonIntField(entry, place, "line", 1) ||
        !JsonStringField(entry, place, "file") || !JsonStringField(entry, place, "reason")) {
      if (++malformed <= kMaxMalformedRejectsListed) {
        faults->push_back({file, "line " + std::to_string((*reader)->lines()) +
                                     " is not {\"doc_id\", \"file\", \"line\", \"reason\"}"});
      }
      continue;
    }
    ++entries;
    document(*doc_id);
  }
  if (malformed > kMaxMalformedRejectsListed) {
    faults->push_back(
        {file, std::to_string(malformed - kMaxMalformedRejectsListed) + " more malformed lines"});
  }
  return entries;
}

}  // namespace actex
