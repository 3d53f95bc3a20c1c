#ifndef ACTEX_ACTORS_JOB_END_LATENTS_H_
#define ACTEX_ACTORS_JOB_END_LATENTS_H_

// At the end of a job with --sae, the host that ended it merges every host's latent
// examples into OUT/latents.safetensors (storage/job_latents.h), so that `actex latents`
// works as soon as the job is done.

#include <string>

#include "actors/mesh_plan.h"
#include "actors/node_options.h"

namespace actex {

struct JobEndLatents {
  bool written = false;
  std::string line;  // for the log: what was written, or why not and what to run instead
};

// Merges the latent examples of every host folder in OUT (the job `options` ran with
// `mesh`, and its earlier runs with other host counts) into OUT/latents.safetensors.
// Call it once every host finished (after the final barrier), on one host. Nothing to
// do (empty line) without --sae. Not written, the line saying why and to run `actex
// inspect --latents OUT` where every folder is: an output shared with other
// --total-machines jobs (they may still run), a writer host's folder not visible here
// (no shared file system), a merge refused (a listed examples file missing or
// damaged, the disk full). The job's own output is complete either way.
JobEndLatents MergeLatentsAtJobEnd(const NodeOptions& options, const MeshPlan& mesh);

}  // namespace actex

#endif  // ACTEX_ACTORS_JOB_END_LATENTS_H_
