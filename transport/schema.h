#ifndef ACTEX_TRANSPORT_SCHEMA_H_
#define ACTEX_TRANSPORT_SCHEMA_H_

// Every message actex sends, in one place. Each is a plain struct encoded as a
// msgpack map (field names on the wire, so fields can be added without breaking
// older readers) with a pinned type id. Bulk numbers (activations, collective
// chunks) never go through msgpack: they travel as raw little-endian frames after
// the body, see transport/wire.h and transport/PROTOCOL.md.
//
// Bump kSchemaVersion when a field changes meaning or a required field is added.

#include <cstdint>
#include <map>
#include <msgpack.hpp>
#include <string>
#include <vector>

namespace actex {

inline constexpr uint32_t kSchemaVersion = 4;

enum class MessageType : uint16_t {
  // Pipeline inside a node (inproc).
  kDocument = 1,
  kTokenBatch = 2,
  kActivationBatch = 3,
  kEndOfStream = 4,
  kReject = 5,
  kUploadRequest = 6,
  kCorpusProgress = 7,
  kChunkEnd = 8,
  kListNow = 9,
  // Node -> monitor subscribers (PUB).
  kMonitorEvent = 10,
  // Collectives between device shards (inproc or tcp).
  kCollectiveChunk = 20,
  // Coordination of the hosts of a job (tcp, node DEALER <-> coordinator ROUTER);
  // ids 30-49 are reserved for it.
  kHello = 30,
  kWelcome = 31,
  kAbort = 32,
  kBarrier = 33,
  kBarrierRelease = 34,
  kHeartbeat = 35,
  kFailure = 36,
  kLeaseRequest = 37,
  kLeaseGrant = 38,
  kChunksListed = 39,
  kListingIntent = 40,
  kListingAck = 41,
  kStandbyUpdate = 42,
  kStandbyConfirm = 43,
  kReattach = 44,
  kHandOver = 45,
  // Ring set-up inside a node (inproc): device shard <-> node.
  kRingBound = 50,
  kRingTable = 51,
};

// loader -> tokenizer: one corpus line that was not rejected.
struct DocumentMessage {
  static constexpr MessageType kType = MessageType::kDocument;
  int64_t doc_id = 0;
  bool pretokenized = false;
  std::string text;
  std::vector<int32_t> input_ids;
  std::string file;
  int64_t line = 0;
  MSGPACK_DEFINE_MAP(doc_id, pretokenized, text, input_ids, file, line);
};

// A run of consecutive tokens of one document inside a batch. A document longer
// than --max-seq-len is either truncated (one sequence) or split into windows, each
// its own sequence with rotary positions restarting at 0.
struct SequenceInfo {
  int64_t doc_id = 0;
  int32_t doc_offset = 0;  // position in the document of the sequence's first token
  int32_t length = 0;
  bool last_of_document = true;
  MSGPACK_DEFINE_MAP(doc_id, doc_offset, length, last_of_document);
};

// tokenizer -> every device shard of the replica: sequences packed end to end.
struct TokenBatchMessage {
  static constexpr MessageType kType = MessageType::kTokenBatch;
  int64_t batch_id = 0;
  std::vector<SequenceInfo> sequences;
  std::vector<int32_t> token_ids;  // [tokens], sequences end to end
  MSGPACK_DEFINE_MAP(batch_id, sequences, token_ids);
};

// device shard rank 0 -> writer. Followed by one raw frame per site, in site_names
// order, each [tokens, width] float32 row-major.
struct ActivationBatchMessage {
  static constexpr MessageType kType = MessageType::kActivationBatch;
  int64_t batch_id = 0;
  std::vector<SequenceInfo> sequences;
  std::vector<int32_t> token_ids;  // [tokens]
  std::vector<std::string> site_names;
  std::vector<int32_t> site_widths;
  MSGPACK_DEFINE_MAP(batch_id, sequences, token_ids, site_names, site_widths);
};

// Sent down the pipeline after the last document/batch, so each stage knows the
// stream ended normally (and not by a crash upstream).
struct EndOfStreamMessage {
  static constexpr MessageType kType = MessageType::kEndOfStream;
  int64_t documents = 0;  // documents sent downstream
  int64_t rejected = 0;   // corpus lines skipped
  int64_t batches = 0;
  // loader -> writer only: the corpus could not be read past this error; what was
  // read before it is written, but the output is not complete.
  std::string corpus_error = {};
  // loader -> tokenizer -> device shards -> writer: the node is draining (SIGTERM);
  // the stream ends early, after the chunk in progress.
  bool drained = false;
  MSGPACK_DEFINE_MAP(documents, rejected, batches, corpus_error, drained);
};

// loader or tokenizer -> writer: a corpus line that produced no document. The
// writer owns the host's output folder, so it alone appends to rejects.jsonl.
struct RejectMessage {
  static constexpr MessageType kType = MessageType::kReject;
  int64_t doc_id = 0;
  std::string file;
  int64_t line = 0;
  std::string reason;
  MSGPACK_DEFINE_MAP(doc_id, file, line, reason);
};

// loader -> writer: how far the corpus has been read, so a corpus whose size is
// known only in bytes (JSONL) still gets an estimated total. `finished` marks the
// last one: next_doc_id is then the exact number of documents. A leased loader sends
// its own chunks' reader's: it reads over the chunks before them, so it too tells
// the corpus's size.
struct CorpusProgressMessage {
  static constexpr MessageType kType = MessageType::kCorpusProgress;
  int64_t next_doc_id = 0;  // documents read or passed over, in all files
  int64_t jsonl_docs = 0;   // of which in JSONL files
  int64_t jsonl_bytes = 0;  // bytes of JSONL files behind them
  bool finished = false;
  MSGPACK_DEFINE_MAP(next_doc_id, jsonl_docs, jsonl_bytes, finished);
};

// loader -> tokenizer -> device shards -> writer, after the last document of a
// chunk: the chunk's batches are all sent, and the writer may list it. `documents`
// is how many doc ids the chunk has in the corpus (the chunk size, or fewer at its
// end); those not written were rejected. `digest` is what the loader read for it
// (storage/chunk_digest.h), listed with the chunk.
struct ChunkEndMessage {
  static constexpr MessageType kType = MessageType::kChunkEnd;
  int64_t chunk = 0;
  int64_t documents = 0;
  std::string digest{};
  MSGPACK_DEFINE_MAP(chunk, documents, digest);
};

// loader -> writer (with the rejects), in a leased job whose host waits for a chunk
// to be free again: every chunk sent went through the pipeline; list them now, so
// the job can finish.
struct ListNowMessage {
  static constexpr MessageType kType = MessageType::kListNow;
  int64_t chunks_sent = 0;  // by this run's loader, each ended at the writer by now
  MSGPACK_DEFINE_MAP(chunks_sent);
};

// writer -> uploader: a shard that was closed and listed in metadata.json. The
// writer's EndOfStream after its last request means metadata.json is final.
struct UploadRequestMessage {
  static constexpr MessageType kType = MessageType::kUploadRequest;
  std::string file;  // name inside the host folder
  int64_t bytes = 0;
  std::string crc32;  // as listed in metadata.json
  MSGPACK_DEFINE_MAP(file, bytes, crc32);
};

// What a node tells whoever watches: kind is one of "started", "progress",
// "shard_written", "uploaded", "upload_failed", "warning", "error", "finished". The
// coordinator adds two kinds of its own (PROTOCOL.md section 9), which its relay
// never takes from a publisher: "lost" for a host it went on without (host_id that
// host, message why, counters zero), and host 0's "standby" (host_id the standby's
// host, message where monitors attach to the standby coordinator).
inline constexpr char kLostEventKind[] = "lost";
inline constexpr char kStandbyEventKind[] = "standby";
struct MonitorEventMessage {
  static constexpr MessageType kType = MessageType::kMonitorEvent;
  std::string kind;
  int32_t host_id = 0;
  double unix_seconds = 0;
  // Listed in shards of the host's metadata.json (earlier runs' included): what a
  // stop now would keep.
  int64_t docs_done = 0;
  // The documents this host's output answers for (computed or rejected): this host's
  // share, or with docs_total_of_job the whole job's (a leased job, whose hosts take
  // chunks as they go). -1 while unknown.
  int64_t docs_total = -1;
  bool docs_total_estimated = false;  // from the bytes of JSONL read so far
  bool docs_total_of_job = false;
  int64_t tokens_done = 0;  // listed, as docs_done
  // The documents of the chunks metadata.json lists, docs_done and those rejected:
  // what the host still answers for if it is lost now (a chunk not listed is computed
  // again, rejects and all).
  int64_t docs_through_listed = 0;
  // Computed so far: listed, or in the shard being filled (a 1 GB shard holds an hour
  // of a slow model's work, which docs_done shows only once it closes).
  int64_t docs_computed = 0;
  int64_t tokens_computed = 0;
  double tokens_per_second = 0;
  int64_t shards_written = 0;
  int64_t rejected = 0;
  std::string message;  // shard file name, warning or error text
  // Hosts in the job, so a monitor knows whom to wait for before it calls the job
  // finished (a slow host may not have sent its first event yet).
  int32_t num_hosts = 1;
  bool from_coordinator() const { return kind == kLostEventKind || kind == kStandbyEventKind; }
  // The documents of docs_total this host is through with: computed or rejected.
  // Saturates: the counters may come off the wire from a stranger.
  int64_t docs_through() const {
    int64_t sum = 0;
    return __builtin_add_overflow(docs_computed, rejected, &sum) ? INT64_MAX : sum;
  }
  MSGPACK_DEFINE_MAP(kind, host_id, unix_seconds, docs_done, docs_total, docs_total_estimated,
                     docs_total_of_job, tokens_done, docs_through_listed, docs_computed,
                     tokens_computed, tokens_per_second, shards_written, rejected, message,
                     num_hosts);
};

// device shard -> its node: the endpoint its ring ingress is bound to (a tcp port
// picked by the system when the predecessor lives on another host).
struct RingBoundMessage {
  static constexpr MessageType kType = MessageType::kRingBound;
  std::string ring;
  int32_t rank = 0;
  std::string endpoint;
  MSGPACK_DEFINE_MAP(ring, rank, endpoint);
};

// node -> device shard: every member's ingress endpoint, by rank, once all hosts met.
struct RingTableMessage {
  static constexpr MessageType kType = MessageType::kRingTable;
  std::string ring;
  std::vector<std::string> endpoints;
  MSGPACK_DEFINE_MAP(ring, endpoints);
};

// One step of a ring collective. Followed by one raw frame of float32 data.
struct CollectiveChunkMessage {
  static constexpr MessageType kType = MessageType::kCollectiveChunk;
  std::string ring;    // which ring (a replica's collective group)
  uint64_t op_id = 0;  // the operation's sequence number within the ring
  int32_t step = 0;    // step of the algorithm, 0-based
  int32_t from_rank = 0;
  int32_t chunk = 0;  // which chunk of the operation's buffer the frame holds
  MSGPACK_DEFINE_MAP(ring, op_id, step, from_rank, chunk);
};

// ---- Coordination between hosts (PROTOCOL.md "Rendezvous, barrier, heartbeat") ----

// The barrier every node enters after its last document; its release ends the job.
inline constexpr char kFinalBarrierName[] = "done";
// HeartbeatMessage::host_id of the coordinator's own heartbeats.
inline constexpr int32_t kCoordinatorHostId = -1;

// node -> coordinator, first message: who the node is, what it runs, where it listens.
struct HelloMessage {
  static constexpr MessageType kType = MessageType::kHello;
  int32_t host_id = 0;
  int32_t num_hosts = 0;
  std::string software_version;
  // Settings that must agree on every host, keyed by the flag that sets them
  // ("mesh" -> "data=2,model=3", "layers" -> "20,21", "model" -> sha256 of the weights).
  std::map<std::string, std::string> fingerprint;
  // Named tcp endpoints this node bound ("ring/replica0/rank3" -> "tcp://10.0.0.11:40123").
  std::map<std::string, std::string> endpoints;
  MSGPACK_DEFINE_MAP(host_id, num_hosts, software_version, fingerprint, endpoints);
};

// coordinator -> every node, once all hosts joined: the union of their endpoints.
struct WelcomeMessage {
  static constexpr MessageType kType = MessageType::kWelcome;
  std::map<std::string, std::string> endpoints;
  MSGPACK_DEFINE_MAP(endpoints);
};

// coordinator -> every node: the job ends now, for this reason.
struct AbortMessage {
  static constexpr MessageType kType = MessageType::kAbort;
  std::string reason;
  MSGPACK_DEFINE_MAP(reason);
};

// node -> coordinator: this host arrived at the barrier `name`.
struct BarrierMessage {
  static constexpr MessageType kType = MessageType::kBarrier;
  std::string name;
  MSGPACK_DEFINE_MAP(name);
};

// coordinator -> every node: every host arrived at the barrier `name`.
struct BarrierReleaseMessage {
  static constexpr MessageType kType = MessageType::kBarrierRelease;
  std::string name;
  MSGPACK_DEFINE_MAP(name);
};

// Both ways, every heartbeat interval: the sender is alive.
struct HeartbeatMessage {
  static constexpr MessageType kType = MessageType::kHeartbeat;
  int32_t host_id = 0;    // the sender's; kCoordinatorHostId from the coordinator
  uint64_t sequence = 0;  // 1, 2, 3, ... per sender
  // A node's: the newest sequence it received from the coordinator (0: none), which
  // tells the coordinator how recently the node still heard it.
  uint64_t echo = 0;
  // Host 0's coordinator's: where its standby coordinator listens now ("": none), so
  // that a node reattaches to a standby that came back on new ports.
  std::string standby{};
  MSGPACK_DEFINE_MAP(host_id, sequence, echo, standby);
};

// node -> coordinator: this host cannot go on; the coordinator aborts the job.
struct FailureMessage {
  static constexpr MessageType kType = MessageType::kFailure;
  int32_t host_id = 0;
  std::string reason;
  // Host 0's, stopped by a signal in a job with a standby: instead of ending the job,
  // its coordinator hands it over to the standby at once.
  bool hand_over = false;
  MSGPACK_DEFINE_MAP(host_id, reason, hand_over);
};

// ---- Work leases (PROTOCOL.md "Leases"): jobs whose replicas each lie on one host ----

// loader -> its node -> coordinator: the host's replica has room for one more chunk.
// `corpus_chunks` is how many chunks the corpus has, once the loader read its end
// (-1 before), so the coordinator learns where the work ends.
struct LeaseRequestMessage {
  static constexpr MessageType kType = MessageType::kLeaseRequest;
  uint64_t request = 0;  // 1, 2, 3, ... per host run, echoed by the grant
  int64_t corpus_chunks = -1;
  MSGPACK_DEFINE_MAP(request, corpus_chunks);
};

// coordinator -> node -> its loader: the answer to host `holder`'s request
// `request`: the chunk it now holds; or -1 with `finished` when no host in the job
// has anything left to do (every chunk is listed, or waits for a lost host's
// folder): the loader ends its streams; or -1 alone when none is free now but some
// are held by others: the request stays open, and a second grant answers it once a
// lost host's chunk is free again or nothing is left. The other hosts of the
// holder's replica get a copy of each grant but a wait.
struct LeaseGrantMessage {
  static constexpr MessageType kType = MessageType::kLeaseGrant;
  uint64_t request = 0;
  int64_t chunk = -1;
  bool finished = false;
  int32_t holder = 0;
  MSGPACK_DEFINE_MAP(request, chunk, finished, holder);
};

// writer -> its node -> coordinator, before the host's metadata.json lists `chunks`:
// the coordinator notes them as being listed (should the host be lost now, they wait
// for its folder rather than go to another host) and answers with a ListingAck.
struct ListingIntentMessage {
  static constexpr MessageType kType = MessageType::kListingIntent;
  uint64_t request = 0;  // 1, 2, 3, ... per host run, echoed by the ack
  std::vector<int64_t> chunks;
  MSGPACK_DEFINE_MAP(request, chunks);
};

// coordinator -> node -> writer: whether the host may list them. Refused (with the
// reason) when it does not hold them, or when its node can no longer ask the
// coordinator (the job ended for it): the chunks are then not listed.
struct ListingAckMessage {
  static constexpr MessageType kType = MessageType::kListingAck;
  uint64_t request = 0;
  bool accepted = false;
  std::string reason;
  MSGPACK_DEFINE_MAP(request, accepted, reason);
};

// writer -> its node -> coordinator: these chunks are now listed in the host's
// metadata.json (its shards hold their documents, or all of them were rejected).
struct ChunksListedMessage {
  static constexpr MessageType kType = MessageType::kChunksListed;
  std::vector<int64_t> chunks;
  MSGPACK_DEFINE_MAP(chunks);
};

// ---- The standby coordinator (PROTOCOL.md "Standby"): host 0's lost, not the job ----

// The key under which the standby's host publishes where its standby coordinator
// listens ("tcp://10.0.0.11:40125") in its Hello.
inline constexpr char kStandbyEndpointKey[] = "coordinator/standby";

// One host as host 0's rendezvous admitted it: its Hello, and the address it came
// from. A standby that took over checks the nodes that come later against these.
struct JoinedHost {
  HelloMessage hello;
  std::string peer;
  MSGPACK_DEFINE_MAP(hello, peer);
};

// host 0's coordinator -> the standby coordinator, at least every heartbeat interval:
// the lease log's records from number `first` on (0: the first record after the
// header), and who is in the job now. Until the standby confirms it holds them, the
// rendezvous's hosts and host 0's --max-hosts go too.
struct StandbyUpdateMessage {
  static constexpr MessageType kType = MessageType::kStandbyUpdate;
  uint64_t first = 0;
  std::vector<std::string> records;  // as the lease log writes them: "granted 12 host-1"
  std::vector<int32_t> hosts;        // the hosts in the job, ascending
  std::vector<std::string> released_barriers;
  bool hand_over = false;          // host 0 leaves: take the job over now
  std::vector<JoinedHost> joined;  // host 0 first; empty once confirmed
  int32_t max_hosts = 0;
  MSGPACK_DEFINE_MAP(first, records, hosts, released_barriers, hand_over, joined, max_hosts);
};

// standby -> host 0's coordinator: it holds the first `records` records on its disk
// (and the rendezvous's hosts, with `joined`); once an interval, host 0 sends again
// what is not confirmed.
struct StandbyConfirmMessage {
  static constexpr MessageType kType = MessageType::kStandbyConfirm;
  uint64_t records = 0;
  bool joined = false;
  MSGPACK_DEFINE_MAP(records, joined);
};

// node -> the standby coordinator, once the node lost host 0's: what the node's host
// holds, so the standby can take over the job. Answered by a Welcome once it did;
// the node then sends again its barrier arrivals, lease requests and listing intents
// that are still open.
struct ReattachMessage {
  static constexpr MessageType kType = MessageType::kReattach;
  int32_t host_id = 0;
  std::vector<int64_t> held;    // chunks granted to it and not listed
  std::vector<int64_t> listed;  // chunks it reported listed
  MSGPACK_DEFINE_MAP(host_id, held, listed);
};

// host 0's coordinator -> every node, when host 0 was stopped by a signal: reattach
// to the standby now, which takes the job over.
struct HandOverMessage {
  static constexpr MessageType kType = MessageType::kHandOver;
  std::string reason;
  MSGPACK_DEFINE_MAP(reason);
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_SCHEMA_H_
