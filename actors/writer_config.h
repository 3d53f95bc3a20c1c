#ifndef ACTEX_ACTORS_WRITER_CONFIG_H_
#define ACTEX_ACTORS_WRITER_CONFIG_H_

// What the writer actor (writer_actor.h) is given: shared with its body
// (writer_stage.h).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "storage/shard_writer_options.h"
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
  // A job of work leases: the totals above count the whole job's documents, not this
  // host's, which are whatever chunks it is granted.
  bool docs_total_of_job = false;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_WRITER_CONFIG_H_
