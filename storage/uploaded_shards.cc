#include "storage/uploaded_shards.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "storage/crc32.h"
#include "storage/host_folder_files.h"

namespace actex {

namespace {

std::string BytesAndCrc(int64_t bytes, const std::string& crc32) {
  return std::to_string(bytes) + " bytes, crc32 " + crc32;
}

}  // namespace

FolderUploads ReadFolderUploads(const OutputFolder& folder, std::vector<VerifyFinding>* faults) {
  FolderUploads uploads;
  const std::string path = folder.path + "/" + kUploadLedgerFile;
  std::error_code error;
  uploads.present = std::filesystem::exists(path, error);
  if (!uploads.present) return uploads;
  auto records = UploadLedger::Read(folder.path);
  if (!records) {
    // The error starts with the ledger's path; the finding names it relative to OUT.
    std::string problem = records.error();
    if (problem.starts_with(path + " ")) problem.erase(0, path.size() + 1);
    faults->push_back({folder.label + "/" + kUploadLedgerFile, std::move(problem)});
    uploads.readable = false;
    return uploads;
  }
  uploads.records = std::move(*records);
  return uploads;
}

MissingShardVerdict JudgeMissingShard(const FolderUploads& uploads, const std::string& file,
                                      const ShardEntry& shard) {
  const std::string listed_crc = FormatCrc32(shard.crc32);
  MissingShardVerdict verdict;
  if (UploadedAndDeleted(uploads.records, file, shard.bytes, listed_crc)) {
    verdict.uploaded_deleted = true;
    verdict.problem = "uploaded and deleted locally (" + std::string(kUploadLedgerFile) +
                      "): its contents were not re-read here; verify the uploaded copy (" +
                      BytesAndCrc(shard.bytes, listed_crc) + ")";
    return verdict;
  }
  verdict.problem = "listed in metadata.json but missing";
  if (!uploads.present) return verdict;
  const std::string ledger = kUploadLedgerFile;
  if (!uploads.readable) {
    verdict.problem += "; " + ledger + ", which could tell whether it was uploaded, is damaged";
    return verdict;
  }
  auto record = uploads.records.find(file);
  if (record == uploads.records.end()) {
    verdict.problem += "; " + ledger + " has no record of uploading it";
  } else if (record->second.bytes != shard.bytes || record->second.crc32 != listed_crc) {
    verdict.problem += "; " + ledger + " records an upload of other contents (" +
                       BytesAndCrc(record->second.bytes, record->second.crc32) +
                       "; metadata.json lists " + BytesAndCrc(shard.bytes, listed_crc) +
                       "), so the uploaded copy is not this shard";
  } else {
    verdict.problem += "; " + ledger +
                       " records it uploaded but not deleted (\"deleted\": false), so it should "
                       "still be here: fetch the uploaded copy back";
  }
  return verdict;
}

DocIdRanges::DocIdRanges(std::vector<std::pair<int64_t, int64_t>> ranges)
    : ranges_(std::move(ranges)) {
  std::sort(ranges_.begin(), ranges_.end());
  for (size_t i = 1; i < ranges_.size(); ++i) {
    ranges_[i].second = std::max(ranges_[i].second, ranges_[i - 1].second);
  }
}

bool DocIdRanges::Contains(int64_t doc_id) const {
  // The last range starting at or before doc_id; its running maximum of "last"
  // covers every range that starts earlier.
  auto after = std::upper_bound(
      ranges_.begin(), ranges_.end(), doc_id,
      [](int64_t id, const std::pair<int64_t, int64_t>& range) { return id < range.first; });
  return after != ranges_.begin() && std::prev(after)->second >= doc_id;
}

std::vector<int64_t> InferDeletedShardDocuments(const ShardEntry& shard,
                                                const std::function<bool(int64_t)>& owns,
                                                const std::vector<int64_t>& rejected) {
  std::vector<int64_t> documents;
  for (int64_t doc_id = shard.first_doc_id; doc_id <= shard.last_doc_id; ++doc_id) {
    if (owns(doc_id) && !std::binary_search(rejected.begin(), rejected.end(), doc_id)) {
      documents.push_back(doc_id);
    }
  }
  return documents;
}

}  // namespace actex
