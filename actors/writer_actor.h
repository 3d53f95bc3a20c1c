#ifndef ACTEX_ACTORS_WRITER_ACTOR_H_
#define ACTEX_ACTORS_WRITER_ACTOR_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "storage/shard_writer.h"
#include "transport/actor.h"
#include "transport/schema.h"

namespace actex {

struct WriterConfig {
  ShardWriterOptions shards;
  std::string activations_endpoint;  // binds a PULL: ActivationBatch* EndOfStream
  // Binds a PULL: (RejectMessage / CorpusProgressMessage)*, one EndOfStream per sender.
  std::string rejects_endpoint;
  int reject_senders = 2;       // the loader and the tokenizer
  std::string events_endpoint;  // connects a PUSH: MonitorEventMessage*
  // Not empty: connects a PUSH to the uploader: an UploadRequest per listed shard,
  // EndOfStream once metadata.json is final.
  std::string uploads_endpoint;
  // A job of work leases: connects a PUSH to the node: a ListingIntentMessage before
  // chunks are listed, answered on listing_acks_endpoint (a PULL it binds; a refusal
  // fails the writer, the chunks unlisted), and a ChunksListedMessage once they are,
  // for the coordinator. Empty otherwise.
  std::string listings_endpoint;
  std::string listing_acks_endpoint;
  // A job of work leases: connects a PUSH to the loader's inbox: each ChunkEnd back
  // once its chunk is through the pipeline (the loader then has room for another).
  std::string chunks_through_endpoint;
  int host_id = 0;
  // Documents this host's output answers for (written or rejected), when the corpus
  // size is known up front (all Parquet); -1 otherwise. Reported as docs_total, so
  // the monitor shows done / total and an ETA (which rejects make a little long).
  int64_t docs_total = -1;
  // Otherwise (JSONL in the corpus), the documents it answers for as the loader's
  // CorpusProgress tells them: an estimate until the last one. Null: none is made.
  std::function<int64_t(const CorpusProgressMessage&)> docs_total_from_progress;
};

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
