#ifndef ACTEX_STORAGE_FINISHED_JOB_RECORD_H_
#define ACTEX_STORAGE_FINISHED_JOB_RECORD_H_

#include <expected>
#include <map>
#include <optional>
#include <string>

namespace actex {

// A job's own record that it finished: the coordinator that released the final
// barrier with every chunk listed (host 0's, or the standby's after a takeover) writes
// it into its host folder as job_finished.json. A node started after the end (a
// Kubernetes pod's index started again, a Slurm requeue, a command run twice) reads
// it before joining: the same job's node then has nothing to do and exits 0, even when
// no process of the job is left to answer it.
struct FinishedJobRecord {
  // What the job's hosts agreed on at the rendezvous, keyed by flag (RunFingerprint):
  // a node belongs to the finished job when its own fingerprint is this one.
  std::map<std::string, std::string> fingerprint;
  int hosts = 0;              // the job's --num-hosts
  std::string progress;       // "40 of 40 chunks listed", as the lease desk says it
  std::string finished_at{};  // UTC, "2026-11-27T20:15:00Z"; the writer stamps it
};

// Writes `record` (finished_at: now) as `folder`/job_finished.json, atomically (a reader sees the
// whole record or none). Errors name the file.
std::expected<void, std::string> WriteFinishedJobRecord(const std::string& folder,
                                                        const FinishedJobRecord& record);

// The record in `folder`, or nullopt when there is none. A record that cannot be read
// or parsed is an error naming the file and the field.
std::expected<std::optional<FinishedJobRecord>, std::string> ReadFinishedJobRecord(
    const std::string& folder);

}  // namespace actex

#endif  // ACTEX_STORAGE_FINISHED_JOB_RECORD_H_
