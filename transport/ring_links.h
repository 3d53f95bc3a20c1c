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

namespace actex {

struct RingOptions {
  std::string ring;                    // name shared by the members, tags every chunk
  int rank = 0;
  // One endpoint per rank, "inproc://..." or "tcp://127.0.0.1:PORT": rank r binds
  // endpoints[r] and connects to endpoints[(r + 1) % size]. A ring may mix both
  // kinds (shards of one host talk inproc, the hop between hosts is tcp).
  std::vector<std::string> endpoints;
  std::chrono::milliseconds timeout{60000};  // per operation
};

// One member's links in a ring: it receives from its predecessor and sends to its
// successor. Every chunk carries (ring, op_id, step, chunk), so a chunk that belongs
// to a later operation is kept until that operation asks for it, and a chunk from
// another ring or an impossible step is refused as an error, never mixed in.
class RingLinks {
 public:
  static std::expected<std::unique_ptr<RingLinks>, std::string> Create(zmq::context_t& context,
                                                                      RingOptions options);
  int rank() const;
  int size() const;
  const RingOptions& options() const;

  // A fresh operation id; every member draws them in the same order.
  uint64_t NextOperation();
  std::expected<void, std::string> SendToNext(uint64_t op_id, int step, int chunk,
                                              std::span<const float> data);
  // Waits (up to the timeout) for the chunk (op_id, step, chunk) from the predecessor.
  std::expected<std::vector<float>, std::string> ReceiveFromPrevious(uint64_t op_id, int step,
                                                                     int chunk);
  ~RingLinks();

 private:
  RingLinks();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_RING_LINKS_H_
