#ifndef ACTEX_ACTORS_NODE_PIPELINE_H_
#define ACTEX_ACTORS_NODE_PIPELINE_H_

#include <expected>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "actors/extract_options.h"
#include "actors/extraction_summary.h"
#include "actors/host_layout.h"
#include "actors/host_output.h"
#include "actors/node_options.h"
#include "actors/node_resources.h"
#include "actors/node_supervisor.h"

namespace actex {

class JobLink;
class LeaseLinks;

// Where the writer and the uploader send their events (MonitorEvent): the node's
// supervisor binds it (PULL) before any actor starts.
inline constexpr const char* kNodeEventsEndpoint = "inproc://events";

// This host's part of the job: its device shards and replicas, and the replica it
// writes, its output folder made ready for this run (PrepareWrittenReplica).
struct HostShare {
  int host_id = 0;
  HostLayout layout;
  std::optional<WrittenReplica> written;  // none: this host writes nothing
};

// Prepares the host: its part of the mesh and, when it writes a replica, its output
// folder (fresh, resumed or overwritten) under OUT/host_NN, which `summary` records
// with the tokens an earlier run listed there. Nothing is started yet.
std::expected<HostShare, std::string> PrepareHostShare(const NodeOptions& options,
                                                       const NodeResources& resources,
                                                       ExtractionSummary& summary);

// What the pipeline's actors are joined to: the node's ZeroMQ context, the supervisor
// they are added to, the link to the job's other hosts (null: a job of one host) and
// the lease links of a leased job (null otherwise).
struct PipelineLinks {
  zmq::context_t& context;
  NodeSupervisor& supervisor;
  JobLink* job = nullptr;
  LeaseLinks* leases = nullptr;
};

// Starts this host's pipeline under `links.supervisor`: uploader (--upload-cmd),
// writer, device shards, then in a job of several hosts the rings (the rendezvous),
// tokenizers and, last, the loader. Returns the first error; the caller then stops
// whatever started and tells the job why.
std::expected<void, std::string> StartPipeline(const ExtractOptions& extract,
                                               const NodeResources& resources, HostShare share,
                                               PipelineLinks links);

}  // namespace actex

#endif  // ACTEX_ACTORS_NODE_PIPELINE_H_
