#include "actors/loader_actor.h"

#include "actors/actor_io.h"
#include "transport/schema.h"

namespace actex {
namespace {

// Documents queued towards the tokenizer: enough to keep it busy, small enough that
// memory does not depend on the corpus.
constexpr int kDocumentQueue = 256;

std::expected<void, std::string> RunLoader(ActorContext& actor, const LoaderConfig& config) {
  auto reader = CorpusReader::Open(config.corpus);
  if (!reader) return std::unexpected(reader.error());
  zmq::socket_t documents = MakePipelineSocket(actor.context(), zmq::socket_type::push,
                                               kDocumentQueue);
  documents.connect(config.documents_endpoint);
  zmq::socket_t rejects = MakePipelineSocket(actor.context(), zmq::socket_type::push,
                                             kDocumentQueue);
  rejects.connect(config.rejects_endpoint);
  actor.SignalReady();

  EndOfStreamMessage end;
  while (true) {
    auto record = (*reader)->Next();
    if (!record) return std::unexpected(record.error());
    if (!*record) break;
    CorpusRecord& line = **record;
    if (!config.owns_document(line.doc_id)) continue;
    std::expected<bool, std::string> sent;
    if (!line.reject_reason.empty()) {
      ++end.rejected;
      sent = SendUnlessStopped(actor, rejects,
                               RejectMessage{line.doc_id, line.file, line.line, line.reject_reason});
    } else {
      ++end.documents;
      DocumentMessage document{line.doc_id, line.pretokenized, std::move(line.text),
                               std::move(line.input_ids), line.file, line.line};
      sent = SendUnlessStopped(actor, documents, document);
    }
    if (!sent) return std::unexpected(sent.error());
    if (!*sent) return {};  // asked to stop
  }
  for (zmq::socket_t* socket : {&documents, &rejects}) {
    auto sent = SendUnlessStopped(actor, *socket, end);
    if (!sent) return std::unexpected(sent.error());
  }
  return {};
}

}  // namespace

std::expected<std::unique_ptr<Actor>, std::string> StartLoader(zmq::context_t& context,
                                                               LoaderConfig config) {
  return Actor::Start(context, "loader", [config = std::move(config)](ActorContext& actor) {
    return RunLoader(actor, config);
  });
}

}  // namespace actex
