#ifndef ACTEX_TRANSPORT_RING_INBOX_H_
#define ACTEX_TRANSPORT_RING_INBOX_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <zmq.hpp>

#include "transport/wire.h"

namespace actex {

// What a ring member does with what arrives from its predecessor (PROTOCOL.md
// section 5): a message is either a chunk it may use, now or later, or dropped
// with a reason; chunks that come before they are asked for wait in a stash.

using ChunkKey = std::tuple<uint64_t, int, int>;  // (op_id, step, chunk)

// The key of `message` when it is a chunk of `ring` from rank `predecessor`, of
// operation `current_op_id` or a later one, carrying one float32 frame; otherwise
// why it must be dropped.
std::expected<ChunkKey, std::string> AcceptChunk(const ReceivedMessage& message,
                                                 const std::string& ring, int predecessor,
                                                 uint64_t current_op_id);

// Chunks that arrived before they were asked for, bounded in count and bytes.
class ChunkStash {
 public:
  ChunkStash(size_t max_chunks, size_t max_bytes)
      : max_chunks_(max_chunks), max_bytes_(max_bytes) {}

  // The frame stashed under `key`, removed from the stash; nullopt when none is.
  std::optional<zmq::message_t> Take(const ChunkKey& key);
  bool Contains(const ChunkKey& key) const { return frames_.contains(key); }
  // Whether `bytes` more would pass a bound (the members then disagree on the
  // order of operations: an error of the ring, not of one message).
  bool WouldOverflow(size_t bytes) const {
    return frames_.size() >= max_chunks_ || bytes_ + bytes > max_bytes_;
  }
  void Put(const ChunkKey& key, zmq::message_t frame);
  // Forgets the chunks of operations before `op_id`, telling `forgotten` each key.
  void ForgetBefore(uint64_t op_id, const std::function<void(const ChunkKey&)>& forgotten);

  size_t size() const { return frames_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  size_t max_chunks_, max_bytes_;
  std::map<ChunkKey, zmq::message_t> frames_;
  size_t bytes_ = 0;
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_RING_INBOX_H_
