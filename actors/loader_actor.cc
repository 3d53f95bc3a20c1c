#include "actors/loader_actor.h"

#include <algorithm>

#include "actors/actor_io.h"
#include "actors/leased_loader.h"
#include "storage/chunk_digest.h"
#include "transport/interrupted.h"
#include "transport/schema.h"

namespace actex {
namespace {

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
    // The first after the first JSONL line, so a total shows from the first seconds;
    // then each time the bytes read doubled (the estimate firms up fast), at most
    // progress_every_bytes apart.
    const int64_t step = std::min(config.progress_every_bytes, progress_sent_at_bytes);
    if (!finished && (progress.jsonl_bytes == progress_sent_at_bytes ||
                      progress.jsonl_bytes - progress_sent_at_bytes < step)) {
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
  std::vector<ChunkDigest> digests(pipelines.size());  // of each open chunk's records
  bool draining = false;
  auto end_chunks_before = [&](int64_t doc_id,
                               bool corpus_ended = false) -> std::expected<void, ActorHalt> {
    for (size_t i = 0; i < pipelines.size(); ++i) {
      const int64_t chunk = open_chunks[i];
      if (chunk < 0 || (!corpus_ended && doc_id < config.chunks.EndDoc(chunk))) continue;
      open_chunks[i] = -1;
      const int64_t documents = config.chunks.DocsIn(chunk, doc_id);
      if (auto sent = SendUnlessStopped(actor, pipelines[i],
                                        ChunkEndMessage{chunk, documents, digests[i].Hex()});
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
    const int64_t chunk = config.chunks.ChunkOf(line.doc_id);
    if (open_chunks[pipeline] != chunk) {
      // Draining: the chunks begun are finished, and no other is begun.
      draining = draining || actor.DrainRequested();
      if (draining && std::ranges::all_of(open_chunks, [](int64_t open) { return open < 0; })) {
        break;
      }
      if (draining) continue;
      open_chunks[pipeline] = chunk;
      digests[pipeline].Reset();
    }
    digests[pipeline].Add(line);
    if (!line.reject_reason.empty()) {
      if (!rejects) continue;
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
        MakePipelineSocket(actor.context(), zmq::socket_type::push, kLoaderDocumentQueue));
    RetryInterrupted([&] { pipelines.back().connect(endpoint); });
  }
  zmq::socket_t rejects;
  if (!config.rejects_endpoint.empty()) {
    rejects = MakePipelineSocket(actor.context(), zmq::socket_type::push, kLoaderDocumentQueue);
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
