#include "actors/loader_actor.h"

#include <algorithm>

#include "actors/actor_io.h"
#include "storage/chunk_reader.h"
#include "transport/interrupted.h"
#include "transport/schema.h"

namespace actex {
namespace {

// Documents queued towards the tokenizer: enough to keep it busy, small enough that
// memory does not depend on the corpus.
constexpr int kDocumentQueue = 256;

// Reads the corpus and hands every record on, then ends every stream.
std::expected<void, ActorHalt> Deal(ActorContext& actor, const LoaderConfig& config,
                                    CorpusReader& reader, std::vector<zmq::socket_t>& pipelines,
                                    zmq::socket_t& rejects) {
  std::vector<EndOfStreamMessage> ends(pipelines.size());
  EndOfStreamMessage rejects_end;
  int64_t progress_sent_at_bytes = 0;
  auto send_progress = [&](bool finished) -> std::expected<void, ActorHalt> {
    if (!rejects) return {};
    const CorpusProgress progress = reader.progress();
    if (!finished && progress.jsonl_bytes - progress_sent_at_bytes < config.progress_every_bytes) {
      return {};
    }
    progress_sent_at_bytes = progress.jsonl_bytes;
    return SendUnlessStopped(actor, rejects,
                             CorpusProgressMessage{progress.next_doc_id, progress.jsonl_docs,
                                                   progress.jsonl_bytes, finished});
  };
  // The chunk each pipeline is being sent (-1: none), ended once a later id shows or
  // the corpus ends (`next_doc_id` is then how many documents it has).
  std::vector<int64_t> open_chunks(pipelines.size(), -1);
  bool draining = false;
  auto end_chunks_before = [&](int64_t doc_id,
                               bool corpus_ended = false) -> std::expected<void, ActorHalt> {
    for (size_t i = 0; i < pipelines.size(); ++i) {
      const int64_t chunk = open_chunks[i];
      if (chunk < 0 || (!corpus_ended && doc_id < (chunk + 1) * config.chunk_docs)) continue;
      open_chunks[i] = -1;
      const int64_t documents = std::min(config.chunk_docs, doc_id - chunk * config.chunk_docs);
      if (auto sent = SendUnlessStopped(actor, pipelines[i], ChunkEndMessage{chunk, documents});
          !sent) {
        return sent;
      }
    }
    return {};
  };
  while (true) {
    auto record = reader.Next();
    if (!record) {
      // A damaged file: without a writer here to finish what was read, fail now;
      // otherwise end the streams normally and let the writer fail after writing.
      if (!rejects) return ActorHalt::Failed(record.error());
      rejects_end.corpus_error = record.error();
      break;
    }
    if (!*record) break;
    CorpusRecord& line = **record;
    if (auto ended = end_chunks_before(line.doc_id); !ended) return ended;
    const int pipeline = config.route(line.doc_id);
    if (pipeline < 0) continue;
    const int64_t chunk = line.doc_id / config.chunk_docs;
    if (open_chunks[pipeline] != chunk) {
      // Draining: the chunks begun are finished, and no other is begun.
      draining = draining || actor.DrainRequested();
      if (draining && std::ranges::all_of(open_chunks, [](int64_t open) { return open < 0; })) {
        break;
      }
      if (draining) continue;
      open_chunks[pipeline] = chunk;
    }
    if (!line.reject_reason.empty()) {
      if (!rejects || !config.lists_reject(line.doc_id)) continue;
      ++rejects_end.rejected;
      auto sent = SendUnlessStopped(
          actor, rejects, RejectMessage{line.doc_id, line.file, line.line, line.reject_reason});
      if (!sent) return sent;
    } else {
      ++ends[pipeline].documents;
      DocumentMessage document{
          line.doc_id, line.pretokenized, std::move(line.text), std::move(line.input_ids),
          line.file,   line.line};
      if (auto sent = SendUnlessStopped(actor, pipelines[pipeline], document); !sent) return sent;
    }
    if (auto sent = send_progress(/*finished=*/false); !sent) return sent;
  }
  // A chunk the damage cut short is never ended, so it is never listed. (A drain
  // ends the loop between chunks, when none is open.)
  if (rejects_end.corpus_error.empty()) {
    if (auto ended = end_chunks_before(reader.progress().next_doc_id, /*corpus_ended=*/true);
        !ended) {
      return ended;
    }
  }
  for (size_t i = 0; i < pipelines.size(); ++i) {
    ends[i].drained = draining;
    if (auto sent = SendUnlessStopped(actor, pipelines[i], ends[i]); !sent) return sent;
  }
  if (!rejects) return {};
  if (!draining) {
    if (auto sent = send_progress(/*finished=*/true); !sent) return sent;
  }
  rejects_end.drained = draining;
  return SendUnlessStopped(actor, rejects, rejects_end);
}

// Sends one granted chunk's records down the pipeline, then its ChunkEnd when it has
// any doc id. Returns how many it has (0 past the corpus's end), or -1 when a
// damaged file cut it short (the error is in rejects_end): such a chunk is never
// ended, so never listed.
std::expected<int64_t, ActorHalt> SendChunk(ActorContext& actor, int64_t chunk, ChunkReader& reader,
                                            zmq::socket_t& pipeline, zmq::socket_t& rejects,
                                            EndOfStreamMessage& end,
                                            EndOfStreamMessage& rejects_end) {
  auto corpus_broke = [&](const std::string& error) {
    rejects_end.corpus_error = error;
    return -1;
  };
  if (auto sought = reader.Seek(chunk); !sought) return corpus_broke(sought.error());
  while (true) {
    auto record = reader.Next();
    if (!record) return corpus_broke(record.error());
    if (!*record) break;
    CorpusRecord& line = **record;
    std::expected<void, ActorHalt> sent;
    if (!line.reject_reason.empty()) {
      ++rejects_end.rejected;
      // A host that writes no output lists no reject either.
      if (rejects) {
        sent = SendUnlessStopped(
            actor, rejects, RejectMessage{line.doc_id, line.file, line.line, line.reject_reason});
      }
    } else {
      ++end.documents;
      sent = SendUnlessStopped(actor, pipeline,
                               DocumentMessage{line.doc_id, line.pretokenized, std::move(line.text),
                                               std::move(line.input_ids), line.file, line.line});
    }
    if (!sent) return std::unexpected(sent.error());
  }
  const int64_t documents = reader.chunk_documents();
  if (documents == 0) return 0;
  if (auto sent = SendUnlessStopped(actor, pipeline, ChunkEndMessage{chunk, documents}); !sent) {
    return std::unexpected(sent.error());
  }
  return documents;
}

// The leased job's loop: asks for a chunk whenever the pipeline has room, reads what
// is granted, and ends the streams when no chunk is left or a drain came.
std::expected<void, ActorHalt> DealLeases(ActorContext& actor, const LoaderConfig& config,
                                          ChunkReader& reader, zmq::socket_t& pipeline,
                                          zmq::socket_t& rejects, zmq::socket_t& requests,
                                          zmq::socket_t& inbox) {
  EndOfStreamMessage end;
  EndOfStreamMessage rejects_end;
  uint64_t requests_sent = 0;
  uint64_t awaited = 0;        // the request whose grant has not come; 0: none
  int64_t chunks_sent = 0;     // with documents, each followed by its ChunkEnd
  int chunks_in_pipeline = 0;  // sent, and not yet echoed by the writer
  bool no_chunk_left = false;
  bool list_when_through = false;  // no chunk is free for now: list what was sent
  bool draining = false;
  const bool follows = config.leasing->follows;
  while (true) {
    draining = draining || actor.DrainRequested();
    // A grant still on its way when the drain came is given back with this host's
    // other unlisted chunks when it leaves the job.
    if (draining || no_chunk_left) break;
    if (list_when_through && chunks_in_pipeline == 0) {
      list_when_through = false;
      auto sent = SendUnlessStopped(actor, rejects, ListNowMessage{chunks_sent});
      if (!sent) return sent;
    }
    if (!follows && awaited == 0 && chunks_in_pipeline < config.leasing->chunks_ahead) {
      awaited = ++requests_sent;
      const int64_t corpus_chunks =
          reader.corpus_documents()
              ? (*reader.corpus_documents() + config.chunk_docs - 1) / config.chunk_docs
              : -1;
      auto sent = SendUnlessStopped(actor, requests, LeaseRequestMessage{awaited, corpus_chunks});
      if (!sent) return sent;
    }
    auto ready = WaitForAnyUnlessStopped(actor, {&inbox}, /*wake_on_drain=*/true);
    if (!ready && ready.error().kind == ActorHalt::Kind::kDrainRequested) continue;
    if (!ready) return std::unexpected(ready.error());
    auto message = Receive(inbox);
    if (!message) return ActorHalt::Failed("lease inbox: " + message.error().message);
    if (message->type == MessageType::kChunkEnd) {
      --chunks_in_pipeline;
      continue;
    }
    auto grant = message->As<LeaseGrantMessage>();
    if (!grant) return ActorHalt::Failed("lease inbox: " + grant.error());
    if (!follows && grant->request != awaited) {
      return ActorHalt::Failed("a lease grant answers request " + std::to_string(grant->request) +
                               ", not the one awaited (" + std::to_string(awaited) + ")");
    }
    if (grant->chunk < 0) {
      // Finished: every chunk is listed. Otherwise the request stays open until a
      // lost host's chunk is free again, and what this host holds is listed meanwhile.
      no_chunk_left = grant->finished;
      list_when_through = !grant->finished && !follows;
      continue;
    }
    awaited = 0;
    auto sent = SendChunk(actor, grant->chunk, reader, pipeline, rejects, end, rejects_end);
    if (!sent) return std::unexpected(sent.error());
    // A damaged file ends the streams normally: the writer fails after writing.
    if (*sent < 0) break;
    if (*sent > 0) {
      ++chunks_sent;
      ++chunks_in_pipeline;
    }
  }
  end.drained = draining;
  rejects_end.drained = draining;
  if (auto sent = SendUnlessStopped(actor, pipeline, end); !sent) return sent;
  if (!rejects) return {};
  return SendUnlessStopped(actor, rejects, rejects_end);
}

std::expected<void, std::string> RunLeasedLoader(ActorContext& actor, const LoaderConfig& config) {
  auto reader = ChunkReader::Open(config.corpus, config.chunk_docs);
  if (!reader) return std::unexpected(reader.error());
  zmq::socket_t pipeline =
      MakePipelineSocket(actor.context(), zmq::socket_type::push, kDocumentQueue);
  RetryInterrupted([&] { pipeline.connect(config.document_endpoints.at(0)); });
  zmq::socket_t rejects;  // none on a host that writes no output
  if (!config.rejects_endpoint.empty()) {
    rejects = MakePipelineSocket(actor.context(), zmq::socket_type::push, kDocumentQueue);
    RetryInterrupted([&] { rejects.connect(config.rejects_endpoint); });
  }
  zmq::socket_t requests;  // none on a follower
  if (!config.leasing->follows) {
    requests = MakePipelineSocket(actor.context(), zmq::socket_type::push, 0);
    RetryInterrupted([&] { requests.connect(config.leasing->requests_endpoint); });
  }
  zmq::socket_t inbox = MakePipelineSocket(actor.context(), zmq::socket_type::pull, 0);
  RetryInterrupted([&] { inbox.bind(config.leasing->inbox_endpoint); });
  actor.SignalReady();
  return EndActor(DealLeases(actor, config, **reader, pipeline, rejects, requests, inbox));
}

std::expected<void, std::string> RunLoader(ActorContext& actor, const LoaderConfig& config) {
  if (config.leasing) return RunLeasedLoader(actor, config);
  CorpusOptions corpus = config.corpus;
  // Documents no pipeline here computes are read past; a Parquet row group holding
  // only such documents (already written before a resume) is not read at all.
  corpus.wants_docs = [&config](int64_t first_doc_id, int64_t last_doc_id) {
    for (int64_t doc_id = first_doc_id; doc_id <= last_doc_id; ++doc_id) {
      if (config.route(doc_id) >= 0) return true;
    }
    return false;
  };
  auto reader = CorpusReader::Open(corpus);
  if (!reader) return std::unexpected(reader.error());
  std::vector<zmq::socket_t> pipelines;
  for (const std::string& endpoint : config.document_endpoints) {
    pipelines.push_back(
        MakePipelineSocket(actor.context(), zmq::socket_type::push, kDocumentQueue));
    RetryInterrupted([&] { pipelines.back().connect(endpoint); });
  }
  zmq::socket_t rejects;
  if (!config.rejects_endpoint.empty()) {
    rejects = MakePipelineSocket(actor.context(), zmq::socket_type::push, kDocumentQueue);
    RetryInterrupted([&] { rejects.connect(config.rejects_endpoint); });
  }
  actor.SignalReady();

  return EndActor(Deal(actor, config, **reader, pipelines, rejects));
}

}  // namespace

std::expected<std::unique_ptr<Actor>, std::string> StartLoader(zmq::context_t& context,
                                                               LoaderConfig config) {
  return Actor::Start(context, "loader", [config = std::move(config)](ActorContext& actor) {
    return RunLoader(actor, config);
  });
}

}  // namespace actex
