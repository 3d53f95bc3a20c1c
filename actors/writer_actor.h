#ifndef ACTEX_ACTORS_WRITER_ACTOR_H_
#define ACTEX_ACTORS_WRITER_ACTOR_H_

#include <expected>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "actors/writer_config.h"
#include "transport/actor.h"

namespace actex {

// Owns the host's output folder: reassembles documents from the activation batches
// (a split document's windows may arrive in several batches), hands whole documents
// and each chunk's end to the ShardWriter, appends rejects.jsonl, and reports progress
// events. It finishes only when every upstream stream has ended normally, so a crash
// upstream can never look like a complete run. A drain request ($DRAIN: the node stops
// its pipeline where it is) makes it take what has already come, list the chunks that
// ended among it with "complete": false, and end; a stop request ends it without
// listing the open shard.
std::expected<std::unique_ptr<Actor>, std::string> StartWriter(zmq::context_t& context,
                                                               WriterConfig config);

}  // namespace actex

#endif  // ACTEX_ACTORS_WRITER_ACTOR_H_
