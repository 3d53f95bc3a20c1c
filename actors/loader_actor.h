#ifndef ACTEX_ACTORS_LOADER_ACTOR_H_
#define ACTEX_ACTORS_LOADER_ACTOR_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "storage/corpus_reader.h"
#include "transport/actor.h"

namespace actex {

struct LoaderConfig {
  CorpusOptions corpus;
  std::string documents_endpoint;  // connects a PUSH: DocumentMessage* EndOfStream
  std::string rejects_endpoint;    // connects a PUSH: RejectMessage* EndOfStream
  // Which documents this node processes; the others are read past, not sent.
  std::function<bool(int64_t doc_id)> owns_document = [](int64_t) { return true; };
};

// Reads the corpus one line at a time and hands each document this node owns to the
// tokenizer, and each rejected line to the writer. Opening the corpus happens before
// the ready handshake, so a missing input file fails Start itself.
std::expected<std::unique_ptr<Actor>, std::string> StartLoader(zmq::context_t& context,
                                                               LoaderConfig config);

}  // namespace actex

#endif  // ACTEX_ACTORS_LOADER_ACTOR_H_
