#ifndef ACTEX_ACTORS_FINISHED_JOB_H_
#define ACTEX_ACTORS_FINISHED_JOB_H_

#include <expected>
#include <optional>
#include <string>

#include "actors/node_options.h"
#include "actors/node_resources.h"

namespace actex {

// The record that the job this node's command belongs to has finished, where it lies.
struct FinishedJob {
  // "OUT/host_00/job_finished.json at 2026-11-27T20:15:00Z, 4 host(s), 40 of 40 chunks
  // listed": what a node's last line cites.
  std::string record;
};

// Whether the job this node's command belongs to has finished, from the job's own
// record (storage/finished_job_record.h) in the folder of host 0 or of the standby
// (whichever coordinator ended it); nullopt when neither folder holds this job's
// record, or the node starts afresh (--overwrite). A record of another command
// (another corpus, model or flags into the same --out, or this job resumed with
// another host count) is logged and left to the usual checks (the folder's resume
// check, the rendezvous), which refuse another job's node as before. An unreadable
// record is an error.
std::expected<std::optional<FinishedJob>, std::string> FindFinishedJob(
    const NodeOptions& options, const NodeResources& resources);

// The line a node that started after its job finished ends with, exit 0: nothing is
// left to do.
std::string FinishedBeforeStartLine(int host_id, const FinishedJob& job);

}  // namespace actex

#endif  // ACTEX_ACTORS_FINISHED_JOB_H_
