#ifndef ACTEX_ACTORS_LOADER_ACTOR_H_
#define ACTEX_ACTORS_LOADER_ACTOR_H_

#include <expected>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "actors/loader_config.h"
#include "transport/actor.h"

namespace actex {

// Reads the corpus one line at a time and hands each document to the tokenizer of
// the replica that computes it, and each rejected line to the writer that lists it;
// a pipeline learns that a chunk of it is over (ChunkEnd) as soon as the corpus
// shows a later document, or ends. With leasing, it reads the granted chunks instead.
// Opening the corpus happens before the ready handshake, so a missing input file
// fails Start itself.
std::expected<std::unique_ptr<Actor>, std::string> StartLoader(zmq::context_t& context,
                                                               LoaderConfig config);

}  // namespace actex

#endif  // ACTEX_ACTORS_LOADER_ACTOR_H_
