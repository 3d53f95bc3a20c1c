#ifndef ACTEX_ACTORS_NODE_H_
#define ACTEX_ACTORS_NODE_H_

#include <chrono>
#include <expected>
#include <string>

#include "actors/extract_options.h"
#include "actors/extraction_summary.h"
#include "actors/node_options.h"
#include "actors/node_supervisor.h"

namespace actex {

// One host's node: loader -> tokenizer(s) -> device shards -> writer, each an actor
// with its own thread and sockets, joined by inproc ZeroMQ links with bounded
// queues; device shards of a replica that spans hosts reduce over tcp. Everything
// is checked before the first document is read; any failure, here or on another
// host, stops every actor, and an open shard is never listed.
std::expected<ExtractionSummary, std::string> RunNode(const NodeOptions& options);

struct NodeResources;  // node_resources.h

// RunNode on what PrepareNode made of `options` (started at `load_start`): the
// command line prepares first, so that every flag is refused before it locks the
// output folder (LockHostOutput), and locks before anything there is touched.
std::expected<ExtractionSummary, std::string> RunPreparedNode(
    const NodeOptions& options, const NodeResources& resources,
    std::chrono::steady_clock::time_point load_start);

// `actex extract`: the node of a job with one host and one replica.
std::expected<ExtractionSummary, std::string> RunExtraction(
    const ExtractOptions& options, const StopSignals* stop_signals = nullptr);

}  // namespace actex

#endif  // ACTEX_ACTORS_NODE_H_
