#ifndef ACTEX_TRANSPORT_RING_LINKS_H_
#define ACTEX_TRANSPORT_RING_LINKS_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "transport/job_security.h"

namespace actex {

struct RingOptions {
  std::string ring;  // name shared by the members, tags every chunk
  int rank = 0;
  // One endpoint per rank, "inproc://..." or "tcp://127.0.0.1:PORT": rank r binds
  // endpoints[r] and connects to endpoints[(r + 1) % size]. A ring may mix both
  // kinds (shards of one host talk inproc, the hop between hosts is tcp).
  std::vector<std::string> endpoints;
  // How long one ReceiveFromPrevious (or a send blocked on a full queue) may wait;
  // a collective fails when any single wait inside it takes longer.
  std::chrono::milliseconds timeout{60000};

  // How long closing the links may still try to deliver chunks already sent (the
  // successor may not have read the last step of the last operation yet).
  std::chrono::milliseconds linger{2000};
  // Messages queued per direction before a send blocks. A ring step must never
  // block on it (or every member could wait on its successor at once): one step
  // moves at most length / size / kRingPieceFloats + 1 messages per link.
  int high_water_mark = 100000;
  // Chunks of later operations (or later steps) kept until asked for; more than
  // this is an error, since a healthy ring never runs that far ahead.
  size_t max_stashed_chunks = 4096;
  size_t max_stashed_bytes = size_t{1} << 30;
  // Optional. While a receive waits for the predecessor and this socket becomes
  // readable, the receive returns an error containing "interrupted" at once, without
  // reading from this socket (its owner reads it next). A device shard passes its
  // actor pipe, so a stop request (e.g. after a host was lost, when a peer's chunk
  // will never come) ends the wait instead of the ring timeout. It must outlive the
  // links and be used by the links' thread only. A send blocked on a full queue is
  // not interrupted (a ring step never fills it, see high_water_mark).
  zmq::socket_t* interrupt = nullptr;
  // The job key: when set, a tcp ingress (PULL) is a CURVE server and a tcp link to
  // the successor (PUSH) a CURVE client; inproc links stay plain. The context's
  // authenticator must run (JobSecurity::StartAuthenticator). Null: plain tcp.
  std::shared_ptr<const JobSecurity> security;
};

// One member's links in a ring: it receives from its predecessor and sends to its
// successor. Every chunk carries (ring, op_id, step, chunk), so a chunk that belongs
// to a later operation is kept until that operation asks for it, and a chunk from
// another ring, from a rank other than the predecessor, of an older operation or an
// impossible step is refused (logged and counted in dropped_chunks()), never mixed in.
// Not thread-safe: one thread uses a member's links at a time.
class RingLinks {
 public:
  // Binds endpoints[rank] and connects to endpoints[(rank + 1) % size].
  static std::expected<std::unique_ptr<RingLinks>, std::string> Create(zmq::context_t& context,
                                                                       RingOptions options);
  // The two halves of Create, for rings whose ports are picked by the system: Bind
  // accepts a tcp endpoint with port "*" (e.g. "tcp://127.0.0.1:*"); the caller then
  // tells every member its successor's bound_endpoint() through ConnectToNext. A
  // member may send before its successor is bound: chunks wait in the queue.
  static std::expected<std::unique_ptr<RingLinks>, std::string> Bind(zmq::context_t& context,
                                                                     RingOptions options);
  // The endpoint actually bound (the resolved port for a "*" endpoint).
  const std::string& bound_endpoint() const;
  std::expected<void, std::string> ConnectToNext(const std::string& endpoint);

  int rank() const;
  int size() const;
  const RingOptions& options() const;

  // A fresh operation id; every member draws them in the same order.
  uint64_t NextOperation();
  std::expected<void, std::string> SendToNext(uint64_t op_id, int step, int chunk,
                                              std::span<const float> data);
  // Waits (up to the timeout) for the chunk (op_id, step, chunk) from the predecessor.
  // Asking for op_id makes it the current operation: stashed and later-arriving
  // chunks of older operations are dropped from then on.
  std::expected<std::vector<float>, std::string> ReceiveFromPrevious(uint64_t op_id, int step,
                                                                     int chunk);

  // The same with the float32 frame itself, so a collective can forward what it
  // received without copying (the frame's size is a multiple of 4).
  std::expected<void, std::string> SendFrameToNext(uint64_t op_id, int step, int chunk,
                                                   zmq::message_t frame);
  std::expected<zmq::message_t, std::string> ReceiveFrameFromPrevious(uint64_t op_id, int step,
                                                                      int chunk);

  // Messages that arrived but were refused (another ring, not from the predecessor,
  // an older operation, a duplicate, malformed): never mixed in, counted here.
  uint64_t dropped_chunks() const;
  // Connections to a tcp ingress that failed the ZeroMQ handshake (not ZeroMQ, or
  // without the job key), logged and counted as they are noticed: at each receive,
  // and here (not const: it reads the pending connection events first).
  uint64_t refused_connections();
  // Chunks received ahead of being asked for and kept for later.
  size_t stashed_chunks() const;
  ~RingLinks();

 private:
  RingLinks();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_RING_LINKS_H_
