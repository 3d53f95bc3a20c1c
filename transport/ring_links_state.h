#ifndef ACTEX_TRANSPORT_RING_LINKS_STATE_H_
#define ACTEX_TRANSPORT_RING_LINKS_STATE_H_

// What a ring member's links hold, shared by ring_links.cc (binding and connecting)
// and ring_links_transfer.cc (chunks sent, received, stashed and refused).

#include <spdlog/fmt/fmt.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "transport/connection_watch.h"
#include "transport/ring_inbox.h"
#include "transport/ring_links.h"

namespace actex {

struct RingLinks::State {
  zmq::context_t* context = nullptr;
  RingOptions options;
  std::string bound_endpoint;
  zmq::socket_t from_previous;  // PULL, bound
  // Failed handshakes on a tcp ingress (strangers, peers without the job key).
  // Declared after from_previous, so it is destroyed (and stops watching) first.
  std::unique_ptr<ConnectionWatch> ingress_watch;
  uint64_t refused_connections = 0;
  zmq::socket_t to_next;  // PUSH, connected to the successor
  bool connected = false;
  uint64_t next_op_id = 1;
  uint64_t current_op_id = 0;
  std::optional<ChunkStash> stash;  // made with the options' bounds
  uint64_t dropped = 0;
  std::string last_drop_reason;

  int size() const { return static_cast<int>(options.endpoints.size()); }
  int previous_rank() const { return (options.rank + size() - 1) % size(); }
  int next_rank() const { return (options.rank + 1) % size(); }

  // "ring 'tp0' rank 1": the start of every message about this member.
  std::string Who() const { return fmt::format("ring '{}' rank {}", options.ring, options.rank); }

  // Counts a refused message, logging the first ten and then every thousandth.
  void Drop(std::string reason);
  // Counts (and logs) the connections the tcp ingress refused since the last call.
  void DrainIngressWatch();

  // Moves on to op `op_id`: an op before the current one is an error (operations are
  // awaited in the order they were drawn); a later one drops the stashed chunks of the
  // ops before it.
  std::expected<void, std::string> AdvanceTo(uint64_t op_id);
  // The error of a receive that waited options.timeout for `wanted`, with what was
  // dropped and refused meanwhile.
  std::string TimedOut(const ChunkKey& wanted);
  // Keeps a chunk that came before the awaited one (`wanted`) for later: a duplicate
  // is dropped; more than the stash holds is an error (the members disagree on the
  // order of operations).
  std::expected<void, std::string> StashAhead(const ChunkKey& key, zmq::message_t payload,
                                              const ChunkKey& wanted);
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_RING_LINKS_STATE_H_
