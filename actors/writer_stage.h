#ifndef ACTEX_ACTORS_WRITER_STAGE_H_
#define ACTEX_ACTORS_WRITER_STAGE_H_

// The writer actor's body (actors/writer_actor.h), in two files: writer_actor.cc
// takes the pipeline's batches, chunk ends and rejects; writer_listing.cc tells the
// others what was listed (the node for leases, the uploader, the monitors).

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actors/document_assembler.h"
#include "actors/writer_config.h"
#include "storage/rejects_log.h"
#include "storage/shard_writer.h"
#include "transport/actor.h"
#include "transport/wire.h"

namespace actex {

// Takes the pipeline's output into shards, and reports what it listed. One per writer
// actor, on its thread.
class WriterStage {
 public:
  WriterStage(ActorContext& actor, const WriterConfig& config) : actor_(actor), config_(config) {}

  std::expected<void, std::string> Run();

 private:
  // The pipeline (writer_actor.cc).
  std::expected<void, std::string> HandleActivations(ReceivedMessage& message,
                                                     DocumentAssembler& assembler);
  // A chunk ended: the shard writer may close (and list) a shard.
  std::expected<void, std::string> HandleChunkEnd(ReceivedMessage& message,
                                                  const DocumentAssembler& assembler);
  std::expected<void, std::string> Handle(ReceivedMessage& message, DocumentAssembler& assembler);
  // Everything already queued, without waiting for more: rejects first, then batches.
  std::expected<void, std::string> TakeWhatCame(zmq::socket_t& rejects, zmq::socket_t& activations,
                                                DocumentAssembler& assembler, int* streams_ended);
  // Logs every reject already queued; counts the senders whose stream ended.
  std::expected<void, std::string> DrainRejects(zmq::socket_t& rejects, int* streams_ended);
  std::expected<void, std::string> HandleReject(ReceivedMessage& message);

  // Telling the others (writer_listing.cc).
  // The loader waits for more work, and every chunk it sent ended here: list them.
  std::expected<void, std::string> ListNow(ReceivedMessage& message);
  // Tells the monitors, the node (leases) and the uploader of the shards listed
  // since the first `shards_before`.
  std::expected<void, std::string> AnnounceListed(int64_t shards_before);
  // Leases: the coordinator must know the chunks are being listed before they are,
  // so that it never gives them to another host should this one be lost meanwhile.
  std::expected<void, std::string> AskToList(const std::vector<int64_t>& chunks);
  // Tells the node the chunks listed since the last report (leases only).
  std::expected<void, std::string> ReportListed();
  // Hands the uploader every shard listed since the first `from` were.
  std::expected<void, std::string> RequestUploads(int64_t from);
  void Report(const std::string& kind, const std::string& text);

  ActorContext& actor_;
  const WriterConfig& config_;
  std::unique_ptr<ShardWriter> shards_;
  std::unique_ptr<RejectsLog> rejects_log_;
  zmq::socket_t events_;
  zmq::socket_t uploads_;       // not connected without an uploader
  zmq::socket_t listings_;      // leases only
  zmq::socket_t listing_acks_;  // leases only
  uint64_t listing_intents_ = 0;
  zmq::socket_t chunks_through_;  // leases only
  std::set<int64_t> reported_;    // listed chunks the node was told of
  int64_t chunks_ended_ = 0;      // by this run
  std::chrono::steady_clock::time_point last_report_ = std::chrono::steady_clock::now();
  int64_t tokens_since_report_ = 0;
  std::string corpus_error_;  // from the loader: the corpus ended in this error
  bool drained_ = false;      // the node is draining: the output ends early, not complete
  int64_t docs_total_ = config_.docs_total;
  bool docs_total_estimated_ = false;
  // Documents and tokens handed to the shard writer, listed or not (MonitorEvent's
  // docs_computed), earlier runs' listed ones included.
  int64_t docs_computed_ = 0;
  int64_t tokens_computed_ = 0;
  int64_t docs_computed_at_start_ = 0;
  bool first_told_ = false;  // this run's first documents computed were reported
};

}  // namespace actex

#endif  // ACTEX_ACTORS_WRITER_STAGE_H_
