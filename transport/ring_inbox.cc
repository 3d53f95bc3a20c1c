#include "transport/ring_inbox.h"

#include <spdlog/fmt/fmt.h>

#include "transport/message_types.h"
#include "transport/schema.h"

namespace actex {

std::expected<ChunkKey, std::string> AcceptChunk(const ReceivedMessage& message,
                                                 const std::string& ring, int predecessor,
                                                 uint64_t current_op_id) {
  auto header = message.As<CollectiveChunkMessage>();
  if (!header) {
    return std::unexpected(fmt::format("not a collective chunk ({}): {}",
                                       MessageTypeName(message.type), header.error()));
  }
  if (header->ring != ring) {
    return std::unexpected(
        fmt::format("chunk of ring '{}' (rank {})", header->ring, header->from_rank));
  }
  if (header->from_rank != predecessor) {
    return std::unexpected(fmt::format("chunk from rank {}, not from the predecessor rank {}",
                                       header->from_rank, predecessor));
  }
  if (header->step < 0 || header->chunk < 0) {
    return std::unexpected(
        fmt::format("impossible step {} / chunk {}", header->step, header->chunk));
  }
  if (message.payloads.size() != 1 || message.payloads[0].size() % sizeof(float) != 0) {
    return std::unexpected(
        fmt::format("chunk of op {} step {} chunk {} does not carry one float32 frame",
                    header->op_id, header->step, header->chunk));
  }
  if (header->op_id < current_op_id) {
    return std::unexpected(
        fmt::format("chunk of op {} arrived during op {}", header->op_id, current_op_id));
  }
  return ChunkKey{header->op_id, header->step, header->chunk};
}

std::optional<zmq::message_t> ChunkStash::Take(const ChunkKey& key) {
  auto found = frames_.find(key);
  if (found == frames_.end()) return std::nullopt;
  zmq::message_t frame = std::move(found->second);
  bytes_ -= frame.size();
  frames_.erase(found);
  return frame;
}

void ChunkStash::Put(const ChunkKey& key, zmq::message_t frame) {
  bytes_ += frame.size();
  frames_.emplace(key, std::move(frame));
}

void ChunkStash::ForgetBefore(uint64_t op_id,
                              const std::function<void(const ChunkKey&)>& forgotten) {
  while (!frames_.empty() && std::get<0>(frames_.begin()->first) < op_id) {
    forgotten(frames_.begin()->first);
    bytes_ -= frames_.begin()->second.size();
    frames_.erase(frames_.begin());
  }
}

}  // namespace actex
