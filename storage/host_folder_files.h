#ifndef ACTEX_STORAGE_HOST_FOLDER_FILES_H_
#define ACTEX_STORAGE_HOST_FOLDER_FILES_H_

#include <array>

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

inline constexpr std::array<const char*, 5> kHostFolderFiles = {
    kMetadataFile, kRejectsFile, kUploadLedgerFile, kLeaseLogFile, kStandbyLeaseLogFile};

}  // namespace actex

#endif  // ACTEX_STORAGE_HOST_FOLDER_FILES_H_
