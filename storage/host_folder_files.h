#ifndef ACTEX_STORAGE_HOST_FOLDER_FILES_H_
#define ACTEX_STORAGE_HOST_FOLDER_FILES_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace actex {

// The files actex writes into a host folder (OUT/host_NN) beside its shards, by name.
// Whoever writes one names it from here, and `actex verify` takes exactly these, the
// listed shards and what a resume sets aside for actex's own (FindUnlistedFiles), so a
// file added here is known to verify at once.
inline constexpr const char* kMetadataFile = "metadata.json";      // shard_writer_state.h
inline constexpr const char* kRejectsFile = "rejects.jsonl";       // rejects_log.h
inline constexpr const char* kUploadLedgerFile = "uploads.jsonl";  // upload_ledger.h
// Host 0's lease log (coordination/lease_log.h), and the standby coordinator's copy of
// it in the standby host's folder (coordination/job_leases.h).
inline constexpr const char* kLeaseLogFile = "leases.log";
inline constexpr const char* kStandbyLeaseLogFile = "leases.standby.log";
// What the coordinator that ended a job with every chunk listed records beside its
// lease log, for nodes started after the end (finished_job_record.h).
inline constexpr const char* kFinishedJobFile = "job_finished.json";

inline constexpr std::array<const char*, 6> kHostFolderFiles = {
    kMetadataFile, kRejectsFile,         kUploadLedgerFile,
    kLeaseLogFile, kStandbyLeaseLogFile, kFinishedJobFile};

// The spill file of tensor `tensor` of the shard being written (shard_spill.h). The
// writer unlinks each one as soon as it is created, so only a process killed between
// the two leaves one behind: a temporary file, like *.tmp, that a resume removes and
// verify does not count as a stranger's.
inline std::string SpillFileName(int shard, size_t tensor) {
  return ".shard_" + std::to_string(shard) + ".spill." + std::to_string(tensor);
}
inline bool IsSpillFileName(std::string_view name) {
  return name.starts_with(".shard_") && name.find(".spill.") != std::string_view::npos;
}

// The latent examples file (latent_examples.h) written and listed with shard
// `shard_file` (shard_NNNNNN.safetensors[.gz]): shard_NNNNNN.examples.safetensors.
inline std::string ExamplesFileName(std::string_view shard_file) {
  return std::string(shard_file.substr(0, shard_file.find('.'))) + ".examples.safetensors";
}
inline bool IsExamplesFileName(std::string_view name) {
  return name.starts_with("shard_") && name.ends_with(".examples.safetensors") &&
         name.find('.') == name.size() - std::string_view(".examples.safetensors").size();
}

// Whether `name` is a temporary file of an interrupted write: *.tmp or a spill file.
inline bool IsTemporaryFileName(std::string_view name) {
  return name.ends_with(".tmp") || IsSpillFileName(name);
}

}  // namespace actex

#endif  // ACTEX_STORAGE_HOST_FOLDER_FILES_H_
