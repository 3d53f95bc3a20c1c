#ifndef ACTEX_ACTORS_FINISHED_JOB_H_
#define ACTEX_ACTORS_FINISHED_JOB_H_

#include <expected>
#include <optional>
#include <string>

#include "actors/node_options.h"
#include "actors/node_resources.h"

namespace actex {

// Whether the job this node's command belongs to has already finished, from the job's
// own record (storage/finished_job_record.h) in the folder of host 0 or of the standby
// (whichever coordinator ended it): the line the node ends with, exit 0, when it did;
// nullopt when neither folder holds this job's record, or the node starts afresh
// (--overwrite): it then joins as usual. A record of another command (another corpus,
// model or flags into the same --out, or this job resumed with another host count) is
// logged and left to the usual checks (the folder's resume check, the rendezvous),
// which refuse another job's node as before. An unreadable record is an error.
std::expected<std::optional<std::string>, std::string> FindFinishedJob(
    const NodeOptions& options, const NodeResources& resources);

}  // namespace actex

#endif  // ACTEX_ACTORS_FINISHED_JOB_H_
