#ifndef ACTEX_ACTORS_LOADER_CONFIG_H_
#define ACTEX_ACTORS_LOADER_CONFIG_H_

// What the loader (loader_actor.h) is given: shared with its leased body
// (leased_loader.h).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "storage/chunk_rule.h"
#include "storage/corpus_reader.h"

namespace actex {

struct LoaderConfig {
  CorpusOptions corpus;
  // One PUSH per replica pipeline on this host: DocumentMessage* EndOfStream.
  std::vector<std::string> document_endpoints;
  // Which pipeline computes a document (an index into document_endpoints), or -1
  // when no replica on this host does: the line is read past, not sent.
  std::function<int(int64_t doc_id)> route = [](int64_t) { return 0; };
  // (RejectMessage / CorpusProgressMessage)* EndOfStream to the writer; empty when
  // this host writes nothing.
  std::string rejects_endpoint;
  // A CorpusProgress goes to the writer after the first JSONL line read, each time the
  // bytes read doubled, and then each time this many more were (a message per MiB
  // costs nothing next to the MiB), and a last one at the end.
  int64_t progress_every_bytes = int64_t{1} << 20;
  // Documents travel in chunks of consecutive ids; after a chunk's last line, its
  // pipeline gets a ChunkEnd.
  ChunkRule chunks;
  // Set in a job of work leases (PROTOCOL.md "Leases"): instead of reading the job's
  // share in order (route), each pipeline gets the chunks granted to one host, in
  // the order granted. This host's own grants it asks for, one more whenever fewer
  // than `chunks_ahead` of them are on their way through its pipeline; their
  // documents are written here. A replica that spans hosts is asked for by its
  // writer host, and its other hosts read copies of those grants. A drain asks for
  // none and ends the streams once the chunks being read are sent; a grant that
  // says the job finished ends them too.
  struct Leasing {
    std::string requests_endpoint;  // connects a PUSH: LeaseRequestMessage to the node
    // Binds a PULL: LeaseGrantMessage from the node; ChunkEndMessage from the writer
    // once a chunk of this host's own went through the pipeline.
    std::string inbox_endpoint;
    int chunks_ahead = 2;
    int host = 0;  // this host: the holder of its own grants
    // Per pipeline (document_endpoints), the host whose grants it reads.
    std::vector<int> grant_holders{};
  };
  std::optional<Leasing> leasing;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_LOADER_CONFIG_H_
