#include "actors/leased_loader.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "actors/actor_io.h"
#include "storage/chunk_digest.h"
#include "storage/chunk_reader.h"
#include "transport/interrupted.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {
namespace {

// Records a pipeline is sent in one turn before the others get theirs.
constexpr int kRecordsPerTurn = 32;

// One pipeline's chunks: those granted to `holder`, in the order granted, read by a
// reader of its own.
struct GrantStream {
  int holder = 0;
  bool own = false;  // this host's grants: asked for, written and listed here
  std::unique_ptr<ChunkReader> reader;
  zmq::socket_t pipeline;
  std::deque<int64_t> granted;  // not begun
  int64_t reading = -1;         // the chunk being sent; -1: none
  ChunkDigest digest;           // of the records of `reading` read so far
  bool finished = false;        // a grant said the job finished
  EndOfStreamMessage end;

  bool has_work() const { return reading >= 0 || !granted.empty(); }
};

class LeasedLoader {
 public:
  LeasedLoader(ActorContext& actor, const LoaderConfig& config) : actor_(actor), config_(config) {}

  // Opens a reader per pipeline and connects the sockets.
  std::expected<void, std::string> Open();
  std::expected<void, ActorHalt> Run();

 private:
  const LoaderConfig::Leasing& leasing() const { return *config_.leasing; }
  // Asks for this host's next chunk, or lists what went through when none is free.
  std::expected<void, ActorHalt> AskOrList();
  // A grant, or the writer's word that one of this host's chunks went through.
  std::expected<void, ActorHalt> TakeInbox();
  // Sends `stream` records while its pipeline has room, for one turn. False when
  // the corpus is damaged: the streams then end.
  std::expected<bool, ActorHalt> Feed(GrantStream& stream);
  // Tells the writer how far this host's own reader got: reading over the chunks
  // before its own, it measures the corpus, so the writer estimates the job's total
  // from the JSONL bytes read (exact once the reader met the corpus's end).
  std::expected<void, ActorHalt> ReportProgress();
  std::expected<bool, ActorHalt> CorpusBroke(const std::string& error);
  std::expected<void, ActorHalt> EndStreams();

  ActorContext& actor_;
  const LoaderConfig& config_;
  std::vector<GrantStream> streams_;
  GrantStream* own_ = nullptr;  // none on a host that writes nothing
  zmq::socket_t rejects_;       // none on a host that writes nothing
  zmq::socket_t requests_;      // none on a host that writes nothing
  zmq::socket_t inbox_;
  EndOfStreamMessage rejects_end_;
  bool draining_ = false;
  // This host's own requests.
  uint64_t requests_sent_ = 0;
  uint64_t awaited_ = 0;            // the request whose grant has not come; 0: none
  int64_t chunks_sent_ = 0;         // with documents, each followed by its ChunkEnd
  int own_chunks_ahead_ = 0;        // granted, and not yet through the writer
  bool list_when_through_ = false;  // no chunk is free for now: list what was sent
};

std::expected<void, std::string> LeasedLoader::Open() {
  const std::vector<int>& holders = leasing().grant_holders;
  if (holders.size() != config_.document_endpoints.size()) {
    return std::unexpected("the loader has " + std::to_string(holders.size()) +
                           " grant holders for " +
                           std::to_string(config_.document_endpoints.size()) + " pipelines");
  }
  streams_.resize(holders.size());
  for (size_t i = 0; i < holders.size(); ++i) {
    GrantStream& stream = streams_[i];
    stream.holder = holders[i];
    stream.own = holders[i] == leasing().host;
    if (stream.own) own_ = &stream;
    auto reader = ChunkReader::Open(config_.corpus, config_.chunks);
    if (!reader) return std::unexpected(reader.error());
    stream.reader = std::move(*reader);
    stream.pipeline =
        MakePipelineSocket(actor_.context(), zmq::socket_type::push, kLoaderDocumentQueue);
    RetryInterrupted([&] { stream.pipeline.connect(config_.document_endpoints[i]); });
  }
  if (!config_.rejects_endpoint.empty()) {
    rejects_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, kLoaderDocumentQueue);
    RetryInterrupted([&] { rejects_.connect(config_.rejects_endpoint); });
  }
  if (own_ != nullptr) {
    requests_ = MakePipelineSocket(actor_.context(), zmq::socket_type::push, 0);
    RetryInterrupted([&] { requests_.connect(leasing().requests_endpoint); });
  }
  inbox_ = MakePipelineSocket(actor_.context(), zmq::socket_type::pull, 0);
  RetryInterrupted([&] { inbox_.bind(leasing().inbox_endpoint); });
  return {};
}

std::expected<void, ActorHalt> LeasedLoader::Run() {
  while (true) {
    draining_ = draining_ || actor_.DrainRequested();
    if (draining_) {
      // Chunks not begun are given back with this host's other unlisted chunks when
      // it leaves the job.
      for (GrantStream& stream : streams_) stream.granted.clear();
    }
    if (std::ranges::all_of(streams_, [&](const GrantStream& stream) {
          return !stream.has_work() && (stream.finished || draining_);
        })) {
      break;
    }
    if (auto asked = AskOrList(); !asked) return asked;
    std::vector<zmq::pollitem_t> items = {{inbox_.handle(), 0, ZMQ_POLLIN, 0}};
    for (GrantStream& stream : streams_) {
      const short events = stream.has_work() ? ZMQ_POLLOUT : 0;
      items.push_back({stream.pipeline.handle(), 0, events, 0});
    }
    auto polled = PollUnlessStopped(actor_, items, /*wake_on_drain=*/!draining_);
    if (!polled && polled.error().kind == ActorHalt::Kind::kDrainRequested) continue;
    if (!polled) return polled;
    if (items[0].revents & ZMQ_POLLIN) {
      if (auto taken = TakeInbox(); !taken) return taken;
    }
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (!(items[i + 1].revents & ZMQ_POLLOUT)) continue;
      auto fed = Feed(streams_[i]);
      if (!fed) return std::unexpected(fed.error());
      if (!*fed) return EndStreams();
    }
  }
  return EndStreams();
}

std::expected<void, ActorHalt> LeasedLoader::AskOrList() {
  if (own_ == nullptr || draining_ || own_->finished) return {};
  if (list_when_through_ && own_chunks_ahead_ == 0) {
    list_when_through_ = false;
    if (auto sent = SendUnlessStopped(actor_, rejects_, ListNowMessage{chunks_sent_}); !sent) {
      return sent;
    }
  }
  if (awaited_ != 0 || own_chunks_ahead_ >= leasing().chunks_ahead) return {};
  awaited_ = ++requests_sent_;
  const std::optional<int64_t> documents = own_->reader->corpus_documents();
  const int64_t corpus_chunks = documents ? config_.chunks.ChunkCount(*documents) : -1;
  return SendUnlessStopped(actor_, requests_, LeaseRequestMessage{awaited_, corpus_chunks});
}

std::expected<void, ActorHalt> LeasedLoader::TakeInbox() {
  auto message = Receive(inbox_);
  if (!message) return ActorHalt::Failed("lease inbox: " + message.error().message);
  if (message->type == MessageType::kChunkEnd) {
    --own_chunks_ahead_;
    return {};
  }
  auto grant = message->As<LeaseGrantMessage>();
  if (!grant) return ActorHalt::Failed("lease inbox: " + grant.error());
  auto stream = std::ranges::find(streams_, grant->holder, &GrantStream::holder);
  if (stream == streams_.end()) {
    return ActorHalt::Failed("a lease grant of host " + std::to_string(grant->holder) +
                             ", whose replica no pipeline here computes");
  }
  if (stream->own) {
    if (grant->request != awaited_) {
      return ActorHalt::Failed("a lease grant answers request " + std::to_string(grant->request) +
                               ", not the one awaited (" + std::to_string(awaited_) + ")");
    }
    // A wait leaves the request open until a lost host's chunk is free again or
    // nothing is left; what this host holds is listed meanwhile.
    if (grant->chunk >= 0 || grant->finished) awaited_ = 0;
    list_when_through_ = grant->chunk < 0 && !grant->finished;
  }
  if (grant->chunk < 0) {
    stream->finished = grant->finished;
    return {};
  }
  if (draining_) return {};
  stream->granted.push_back(grant->chunk);
  if (stream->own) ++own_chunks_ahead_;
  return {};
}

std::expected<bool, ActorHalt> LeasedLoader::Feed(GrantStream& stream) {
  if (stream.reading < 0) {
    stream.reading = stream.granted.front();
    stream.granted.pop_front();
    stream.digest.Reset();
    if (auto sought = stream.reader->Seek(stream.reading); !sought) {
      return CorpusBroke(sought.error());
    }
  }
  // The pipeline's room is read before each record, so a send does not wait (unless
  // the next actor left since: SendUnlessStopped then waits, hearing a stop).
  for (int turn = 0; turn < kRecordsPerTurn; ++turn) {
    const int events = RetryInterrupted([&] { return stream.pipeline.get(zmq::sockopt::events); });
    if (!(events & ZMQ_POLLOUT)) return true;
    auto record = stream.reader->Next();
    if (!record) return CorpusBroke(record.error());
    if (!*record) {
      const int64_t chunk = std::exchange(stream.reading, -1);
      const int64_t documents = stream.reader->chunk_documents();
      if (stream.own) {
        if (auto reported = ReportProgress(); !reported) return std::unexpected(reported.error());
      }
      if (documents == 0) {  // past the corpus's end: nothing goes through
        if (stream.own) --own_chunks_ahead_;
        return true;
      }
      auto ended = SendUnlessStopped(actor_, stream.pipeline,
                                     ChunkEndMessage{chunk, documents, stream.digest.Hex()});
      if (!ended) return std::unexpected(ended.error());
      if (stream.own) ++chunks_sent_;
      return true;
    }
    CorpusRecord& line = **record;
    stream.digest.Add(line);
    if (!line.reject_reason.empty()) {
      // Only the host that writes a replica lists its rejected lines.
      if (!stream.own || !rejects_) continue;
      ++rejects_end_.rejected;
      auto listed = SendUnlessStopped(
          actor_, rejects_, RejectMessage{line.doc_id, line.file, line.line, line.reject_reason});
      if (!listed) return std::unexpected(listed.error());
      continue;
    }
    ++stream.end.documents;
    auto sent =
        SendUnlessStopped(actor_, stream.pipeline,
                          DocumentMessage{line.doc_id, line.pretokenized, std::move(line.text),
                                          std::move(line.input_ids), line.file, line.line});
    if (!sent) return std::unexpected(sent.error());
  }
  return true;
}

std::expected<void, ActorHalt> LeasedLoader::ReportProgress() {
  if (!rejects_) return {};
  const CorpusProgress progress = own_->reader->progress();
  const std::optional<int64_t> documents = own_->reader->corpus_documents();
  return SendUnlessStopped(
      actor_, rejects_,
      CorpusProgressMessage{documents.value_or(progress.next_doc_id), progress.jsonl_docs,
                            progress.jsonl_bytes, documents.has_value()});
}

std::expected<bool, ActorHalt> LeasedLoader::CorpusBroke(const std::string& error) {
  // A chunk the damage cut short is never ended, so never listed. The writer of each
  // replica, here or on another host, reads the same damage and fails after writing.
  rejects_end_.corpus_error = error;
  return false;
}

std::expected<void, ActorHalt> LeasedLoader::EndStreams() {
  for (GrantStream& stream : streams_) {
    stream.end.drained = draining_;
    if (auto sent = SendUnlessStopped(actor_, stream.pipeline, stream.end); !sent) return sent;
  }
  if (!rejects_) return {};
  rejects_end_.drained = draining_;
  return SendUnlessStopped(actor_, rejects_, rejects_end_);
}

}  // namespace

std::expected<void, std::string> RunLeasedLoader(ActorContext& actor, const LoaderConfig& config) {
  LeasedLoader loader(actor, config);
  if (auto opened = loader.Open(); !opened) return opened;
  actor.SignalReady();
  return EndActor(loader.Run());
}

}  // namespace actex
