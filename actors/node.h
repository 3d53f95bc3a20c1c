#ifndef ACTEX_ACTORS_NODE_H_
#define ACTEX_ACTORS_NODE_H_

#include <cstdint>
#include <expected>
#include <string>

#include "actors/extract_options.h"

namespace actex {

struct ExtractionSummary {
  std::string host_dir;  // OUT/host_NN
  int64_t docs = 0, tokens = 0, shards = 0, rejected = 0;
  double load_seconds = 0;     // config, weights and tokenizer, before any document
  double extract_seconds = 0;  // first document to metadata.json written
  double tokens_per_second = 0;
};

// One host's node: loader -> tokenizer -> device shards -> writer, each an actor
// with its own thread and sockets, joined by inproc ZeroMQ links with bounded
// queues. Everything is checked before the first document is read; any actor's
// failure stops the others and is returned, and the open shard is never listed.
std::expected<ExtractionSummary, std::string> RunExtraction(const ExtractOptions& options);

}  // namespace actex

#endif  // ACTEX_ACTORS_NODE_H_
