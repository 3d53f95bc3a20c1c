#include "actors/writer_actor.h"

#include <chrono>
#include <cstdint>

#include "actors/actor_io.h"
#include "actors/writer_stage.h"
#include "transport/interrupted.h"
#include "transport/schema.h"

namespace actex {
namespace {

constexpr int kBatchQueue = 2;
constexpr int kRejectQueue = 1024;
constexpr auto kProgressInterval = std::chrono::seconds(1);

}  // namespace

std::expected<void, std::string> WriterStage::Run() {
  ShardWriterOptions options = config_.shards;
  if (!config_.listings_endpoint.empty()) {
    options.before_listing = [this](const std::vector<int64_t>& chunks) {
      return AskToList(chunks);
    };
  }
  auto shards = ShardWriter::Open(std::move(options));
  if (!shards) return std::unexpected(shards.error());
  shards_ = std::move(*shards);
  docs_computed_ = docs_computed_at_start_ = shards_->stats().docs;  // earlier runs' listed ones
  tokens_computed_ = shards_->stats().tokens;
  auto rejects_log = RejectsLog::Open(config_.shards.dir + "/rejects.jsonl");
  if (!rejects_log) return std::unexpected(rejects_log.error());
  rejects_log_ = std::move(*rejects_log);
  DocumentAssembler assembler(config_.shards.sites);

  zmq::socket_t activations =
      MakePipelineSocket(actor_.context(), zmq::socket_type::pull, kBatchQueue);
  RetryInterrupted([&] { activations.bind(config_.activations_endpoint); });
  zmq::socket_t rejects =
      MakePipelineSocket(actor_.context(), zmq::socket_type::pull, kRejectQueue);
  RetryInterrupted([&] { rejects.bind(config_.rejects_endpoint); });
  events_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, 1000);
  events_.set(zmq::sockopt::sndtimeo, 0);
  RetryInterrupted([&] { events_.connect(config_.events_endpoint); });
  if (!config_.uploads_endpoint.empty()) {
    // Unbounded: a request is a few bytes per shard, and the writer never waits for
    // an upload.
    uploads_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, 0);
    RetryInterrupted([&] { uploads_.connect(config_.uploads_endpoint); });
  }
  if (!config_.listings_endpoint.empty()) {
    // Unbounded: a listing is a few bytes per shard, and the node always reads.
    listings_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, 0);
    RetryInterrupted([&] { listings_.connect(config_.listings_endpoint); });
    listing_acks_ = MakePipelineSocket(actor_.context(), zmq::socket_type::pull, 0);
    RetryInterrupted([&] { listing_acks_.bind(config_.listing_acks_endpoint); });
    reported_ = shards_->listed_chunks();  // published when the job began
  }
  if (!config_.chunks_through_endpoint.empty()) {
    chunks_through_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, 0);
    chunks_through_.set(zmq::sockopt::sndtimeo, 0);
    RetryInterrupted([&] { chunks_through_.connect(config_.chunks_through_endpoint); });
  }
  actor_.SignalReady();
  Report("started", "");

  bool activations_ended = false;
  int reject_streams_ended = 0;
  // A drain (SIGTERM) ends the tokenizer's streams early, marked drained; the loader,
  // stopped, ends none, so the tokenizer's drained rejects end is the last one.
  auto rejects_done = [&] { return drained_ || reject_streams_ended >= config_.reject_senders; };
  while (!activations_ended || !rejects_done()) {
    // Rejects first: a shard listing documents up to D is listed only after every
    // reject below D was logged (the loader and tokenizer send a reject before
    // anything that follows it), so a resume never has to re-list one.
    auto ready = WaitForAnyUnlessStopped(actor_, {&rejects, &activations},
                                         /*wake_on_drain=*/true);
    if (!ready && ready.error().kind == ActorHalt::Kind::kDrainRequested) {
      // The pipeline was stopped where it is: list what came whole, and end.
      if (auto taken = TakeWhatCame(rejects, activations, assembler, &reject_streams_ended);
          !taken) {
        return taken;
      }
      drained_ = true;
      break;
    }
    if (!ready) return EndActor(ready.error());  // stopped: the open shard is never listed
    if (auto drained = DrainRejects(rejects, &reject_streams_ended); !drained) return drained;
    if (*ready == 0) continue;
    auto message = Receive(activations);
    if (!message) return std::unexpected(message.error().message);
    if (message->type == MessageType::kEndOfStream) {
      auto end = message->As<EndOfStreamMessage>();
      if (!end) return std::unexpected("from device shard 0: " + end.error());
      activations_ended = true;
      drained_ = drained_ || end->drained;
      continue;
    }
    if (auto handled = Handle(*message, assembler); !handled) return handled;
    // The first documents computed are told at once, then the progress once a second.
    const bool first_documents = docs_computed_ > docs_computed_at_start_ && !first_told_;
    if (first_documents || std::chrono::steady_clock::now() - last_report_ >= kProgressInterval) {
      first_told_ = true;
      Report("progress", "");
    }
  }
  // A drained stream may end inside a split document: its chunk is not listed, and
  // a later run computes it again.
  if (!assembler.idle() && !drained_) {
    return std::unexpected("the stream ended inside a split document");
  }
  const int64_t shards_before = shards_->stats().shards;
  auto finished = shards_->Finish(/*complete=*/corpus_error_.empty() && !drained_);
  if (!finished) return finished;
  if (auto reported = ReportListed(); !reported) return reported;
  Report(drained_ ? "drained" : "finished", "");
  if (auto requested = RequestUploads(shards_before); !requested) return requested;
  if (uploads_) {
    auto sent = SendUnlessStopped(actor_, uploads_, EndOfStreamMessage{});
    if (auto ended = EndActor(sent); !ended) return ended;
  }
  // Everything read before the corpus broke is written: now the run fails.
  if (!corpus_error_.empty()) return std::unexpected(corpus_error_);
  return {};
}

std::expected<void, std::string> WriterStage::HandleActivations(ReceivedMessage& message,
                                                                DocumentAssembler& assembler) {
  auto batch = message.As<ActivationBatchMessage>();
  if (!batch) return std::unexpected("from device shard 0: " + batch.error());
  if (message.payloads.size() != batch->site_names.size()) {
    return std::unexpected("batch " + std::to_string(batch->batch_id) + " lacks site frames");
  }
  // Large frames live on the heap and are read in place; ZeroMQ keeps frames of a
  // few bytes inside the message object, possibly misaligned, so those are copied.
  // An integer site's frame holds int32s, the others float32s (4 bytes either way).
  std::vector<SiteRows> sites;
  std::vector<std::vector<float>> float_copies;
  std::vector<std::vector<int32_t>> integer_copies;
  for (size_t s = 0; s < message.payloads.size(); ++s) {
    const zmq::message_t& frame = message.payloads[s];
    const bool integer = s < config_.shards.sites.size() && config_.shards.sites[s].integer;
    const bool aligned = reinterpret_cast<uintptr_t>(frame.data()) % alignof(float) == 0;
    if (integer && aligned) {
      sites.emplace_back(std::span(frame.data<int32_t>(), frame.size() / sizeof(int32_t)));
    } else if (aligned) {
      sites.emplace_back(std::span(frame.data<float>(), frame.size() / sizeof(float)));
    } else if (integer) {
      auto integers = Int32sFromFrame(frame);
      if (!integers) return std::unexpected(integers.error());
      sites.emplace_back(
          std::span<const int32_t>(integer_copies.emplace_back(std::move(*integers))));
    } else {
      auto floats = FloatsFromFrame(frame);
      if (!floats) return std::unexpected(floats.error());
      sites.emplace_back(std::span<const float>(float_copies.emplace_back(std::move(*floats))));
    }
  }
  auto added = assembler.AddBatch(*batch, sites, [this](const DocumentActivations& document) {
    auto stored = shards_->Add(document);
    if (stored) {
      ++docs_computed_;
      tokens_computed_ += static_cast<int64_t>(document.token_ids.size());
    }
    return stored;
  });
  if (!added) return added;
  tokens_since_report_ += static_cast<int64_t>(batch->token_ids.size());
  return {};
}

std::expected<void, std::string> WriterStage::HandleChunkEnd(ReceivedMessage& message,
                                                             const DocumentAssembler& assembler) {
  auto chunk_end = message.As<ChunkEndMessage>();
  if (!chunk_end) return std::unexpected("from device shard 0: " + chunk_end.error());
  if (!assembler.idle()) {
    return std::unexpected("chunk " + std::to_string(chunk_end->chunk) +
                           " ended inside a split document");
  }
  const int64_t shards_before = shards_->stats().shards;
  if (auto ended = shards_->EndChunk(chunk_end->chunk, chunk_end->documents, chunk_end->digest);
      !ended) {
    return ended;
  }
  ++chunks_ended_;
  if (chunks_through_) {
    // Only a hint that the loader may ask for more: it may have ended already.
    msgpack::sbuffer body;
    msgpack::pack(body, *chunk_end);
    (void)SendEncoded(chunks_through_, chunk_end->kType, body, {});
  }
  return AnnounceListed(shards_before);
}

std::expected<void, std::string> WriterStage::Handle(ReceivedMessage& message,
                                                     DocumentAssembler& assembler) {
  if (message.type == MessageType::kChunkEnd) return HandleChunkEnd(message, assembler);
  return HandleActivations(message, assembler);
}

std::expected<void, std::string> WriterStage::TakeWhatCame(zmq::socket_t& rejects,
                                                           zmq::socket_t& activations,
                                                           DocumentAssembler& assembler,
                                                           int* streams_ended) {
  while (true) {
    if (auto drained = DrainRejects(rejects, streams_ended); !drained) return drained;
    auto message = Receive(activations, std::chrono::milliseconds(0));
    if (!message) return std::unexpected(message.error().message);
    if (!*message || (*message)->type == MessageType::kEndOfStream) return {};
    if (auto handled = Handle(**message, assembler); !handled) return handled;
  }
}

std::expected<void, std::string> WriterStage::DrainRejects(zmq::socket_t& rejects,
                                                           int* streams_ended) {
  while (true) {
    auto message = Receive(rejects, std::chrono::milliseconds(0));
    if (!message) return std::unexpected(message.error().message);
    if (!*message) return {};
    if ((*message)->type == MessageType::kEndOfStream) {
      auto end = (*message)->As<EndOfStreamMessage>();
      if (!end) return std::unexpected("rejects: " + end.error());
      if (!end->corpus_error.empty()) corpus_error_ = end->corpus_error;
      drained_ = drained_ || end->drained;
      ++*streams_ended;
      continue;
    }
    if ((*message)->type == MessageType::kListNow) {
      if (auto listed = ListNow(**message); !listed) return listed;
      continue;
    }
    if ((*message)->type == MessageType::kCorpusProgress) {
      auto progress = (*message)->As<CorpusProgressMessage>();
      if (!progress) return std::unexpected("corpus progress: " + progress.error());
      if (config_.docs_total_from_progress) {
        const bool was_unknown = docs_total_ < 0;
        docs_total_ = config_.docs_total_from_progress(*progress);
        docs_total_estimated_ = !progress->finished;
        if (was_unknown && docs_total_ >= 0) Report("progress", "");  // the first total
      }
      continue;
    }
    if (auto logged = HandleReject(**message); !logged) return logged;
  }
}

std::expected<void, std::string> WriterStage::HandleReject(ReceivedMessage& message) {
  auto reject = message.As<RejectMessage>();
  if (!reject) return std::unexpected("reject: " + reject.error());
  return rejects_log_->Add(reject->doc_id, reject->file, reject->line, reject->reason);
}

std::expected<std::unique_ptr<Actor>, std::string> StartWriter(zmq::context_t& context,
                                                               WriterConfig config) {
  return Actor::Start(context, "writer", [config = std::move(config)](ActorContext& actor) {
    return WriterStage(actor, config).Run();
  });
}

}  // namespace actex
