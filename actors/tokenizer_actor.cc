#include "actors/tokenizer_actor.h"

#include <chrono>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "actors/actor_io.h"
#include "actors/document_encoder.h"
#include "transport/interrupted.h"
#include "transport/schema.h"

namespace actex {
namespace {

// Batches queued per device shard. Two keep the shard busy while the next one is
// packed; more would only hold memory.
constexpr int kBatchQueue = 2;
constexpr int kDocumentQueue = 256;
// Documents encoded together per tokenizing thread, at most: enough to keep every
// thread busy, few enough that the shards never wait long for the first batch.
constexpr size_t kDocumentsPerThread = 16;

class TokenizerStage {
 public:
  TokenizerStage(ActorContext& actor, TokenizerActorConfig& config)
      : actor_(actor),
        config_(config),
        packer_(config.packing),
        encoder_(std::move(config.tokenizers),
                 DocumentEncoderOptions{.model_dir = config.model_dir,
                                        .vocab_size = config.vocab_size,
                                        .bos_token_id = config.bos_token_id,
                                        .bos_on_pretokenized = config.bos_on_pretokenized}) {}

  std::expected<void, std::string> Run() {
    zmq::socket_t documents =
        MakePipelineSocket(actor_.context(), zmq::socket_type::pull, kDocumentQueue);
    RetryInterrupted([&] { documents.bind(config_.documents_endpoint); });
    for (const std::string& endpoint : config_.shard_endpoints) {
      shards_.push_back(MakePipelineSocket(actor_.context(), zmq::socket_type::push, kBatchQueue));
      RetryInterrupted([&] { shards_.back().connect(endpoint); });
    }
    if (!config_.rejects_endpoint.empty()) {
      rejects_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, kDocumentQueue);
      RetryInterrupted([&] { rejects_.connect(config_.rejects_endpoint); });
    }
    actor_.SignalReady();
    return EndActor(Tokenize(documents));
  }

 private:
  using Step = std::expected<void, ActorHalt>;

  Step Tokenize(zmq::socket_t& documents) {
    while (true) {
      std::optional<ReceivedMessage> message = std::exchange(read_ahead_, std::nullopt);
      if (!message) {
        // A drain is heard only here, between documents: a batch is always sent to
        // every shard of the replica, or to none.
        auto ready = WaitForAnyUnlessStopped(actor_, {&documents}, /*wake_on_drain=*/!draining_);
        if (!ready && ready.error().kind == ActorHalt::Kind::kDrainRequested) {
          if (!in_chunk_) return Drain(documents);
          draining_ = true;
          continue;
        }
        if (!ready) return std::unexpected(ready.error());
        auto received = Receive(documents);
        if (!received) return ActorHalt::Failed(received.error().message);
        message = std::move(*received);
      }
      if (message->type == MessageType::kEndOfStream) {
        auto end = message->As<EndOfStreamMessage>();
        if (!end) return ActorHalt::Failed("from the loader: " + end.error());
        return Finish(*end);
      }
      if (message->type == MessageType::kChunkEnd) {
        auto chunk_end = message->As<ChunkEndMessage>();
        if (!chunk_end) return ActorHalt::Failed("from the loader: " + chunk_end.error());
        if (auto ended = EndChunk(*chunk_end); !ended) return ended;
        in_chunk_ = false;
        // Draining: the chunk in progress is done; what is queued behind it is left
        // for a later run.
        if (draining_) return Drain(documents);
        continue;
      }
      in_chunk_ = true;
      if (auto handled = HandleQueued(documents, std::move(*message)); !handled) return handled;
    }
  }

  // `first` (a document, or a message the loader never sends: an error) and the
  // documents queued behind it, encoded together and packed in order; the first message
  // after them that is not a document is kept in read_ahead_.
  Step HandleQueued(zmq::socket_t& documents, ReceivedMessage first) {
    std::vector<DocumentMessage> queued;
    const size_t most = kDocumentsPerThread * static_cast<size_t>(encoder_.threads());
    std::optional<ReceivedMessage> next = std::move(first);
    do {
      auto document = next->As<DocumentMessage>();
      if (!document) return ActorHalt::Failed("from the loader: " + document.error());
      queued.push_back(std::move(*document));
      next.reset();
      if (queued.size() >= most) break;
      auto more = Receive(documents, std::chrono::milliseconds(0));
      if (!more) return ActorHalt::Failed(more.error().message);
      next = std::move(*more);
    } while (next && next->type == MessageType::kDocument);
    read_ahead_ = std::move(next);
    const std::vector<EncodedDocument> encoded = encoder_.Encode(queued);
    for (size_t i = 0; i < queued.size(); ++i) {
      if (auto handled = Handle(queued[i], encoded[i]); !handled) return handled;
    }
    return {};
  }

  Step Handle(const DocumentMessage& document, const EncodedDocument& encoded) {
    if (!encoded.failure.empty()) return ActorHalt::Failed(encoded.failure);
    if (!encoded.reject.empty()) return Reject(document, encoded.reject);
    ++documents_sent_;
    for (TokenBatchMessage& batch : packer_.Add(document.doc_id, encoded.tokens)) {
      if (auto sent = Broadcast(batch); !sent) return sent;
    }
    return {};
  }

  Step Reject(const DocumentMessage& document, const std::string& reason) {
    ++rejected_;
    if (!rejects_) return {};
    return SendUnlessStopped(actor_, rejects_,
                             RejectMessage{document.doc_id, document.file, document.line, reason});
  }

  // Every shard of the replica gets the same message.
  template <typename T>
  Step Broadcast(const T& message) {
    for (zmq::socket_t& shard : shards_) {
      if (auto sent = SendUnlessStopped(actor_, shard, message); !sent) return sent;
    }
    return {};
  }

  // A batch never holds two chunks' documents, so that a document's batch, and with
  // it its numbers to the last bit, is the same whichever replica computes its chunk.
  Step EndChunk(const ChunkEndMessage& chunk_end) {
    if (auto batch = packer_.Flush()) {
      if (auto sent = Broadcast(*batch); !sent) return sent;
    }
    return Broadcast(chunk_end);
  }

  // Ends the streams after the chunk just ended, marked drained, then reads past
  // what the loader still sends until its end, so that it too can finish.
  Step Drain(zmq::socket_t& documents) {
    if (auto ended = EndStreams(rejected_, /*drained=*/true); !ended) return ended;
    while (true) {
      auto message = ReceiveUnlessStopped(actor_, documents);
      if (!message) return std::unexpected(message.error());
      if (message->type == MessageType::kEndOfStream) return {};
    }
  }

  Step Finish(const EndOfStreamMessage& from_loader) {
    if (auto batch = packer_.Flush()) {
      if (auto sent = Broadcast(*batch); !sent) return sent;
    }
    return EndStreams(from_loader.rejected + rejected_, /*drained=*/false);
  }

  // The shards' stream (with the rejects counted upstream too) and the writer's rejects
  // stream; a drained end tells the writer to wait for no other rejects stream.
  Step EndStreams(int64_t rejected_upstream_too, bool drained) {
    EndOfStreamMessage end{documents_sent_, rejected_upstream_too, packer_.batches_emitted()};
    end.drained = drained;
    if (auto sent = Broadcast(end); !sent) return sent;
    if (!rejects_) return {};
    EndOfStreamMessage rejects_end{0, rejected_, 0};
    rejects_end.drained = drained;
    return SendUnlessStopped(actor_, rejects_, rejects_end);
  }

  ActorContext& actor_;
  TokenizerActorConfig& config_;
  SequencePacker packer_;
  DocumentEncoder encoder_;
  // A message read behind the documents encoded last, handled next.
  std::optional<ReceivedMessage> read_ahead_;
  std::vector<zmq::socket_t> shards_;
  zmq::socket_t rejects_;
  int64_t documents_sent_ = 0;
  int64_t rejected_ = 0;
  bool in_chunk_ = false;  // a document came since the last ChunkEnd
  bool draining_ = false;  // the node is draining: end after the chunk in progress
};

}  // namespace

std::expected<std::unique_ptr<Actor>, std::string> StartTokenizerActor(
    zmq::context_t& context, TokenizerActorConfig config) {
  auto shared = std::make_shared<TokenizerActorConfig>(std::move(config));
  return Actor::Start(context, "tokenizer",
                      [shared](ActorContext& actor) -> std::expected<void, std::string> {
                        std::optional<TokenizerStage> stage;
                        try {
                          stage.emplace(actor, *shared);
                        } catch (const std::system_error& e) {  // the encoder's ThreadTeam
                          return std::unexpected("tokenizer threads (--tokenizer-threads): " +
                                                 std::string(e.what()));
                        }
                        return stage->Run();
                      });
}

}  // namespace actex
