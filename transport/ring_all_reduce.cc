#include "transport/ring_all_reduce.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "transport/wire.h"

namespace actex {
namespace {

// Where each piece of the buffer lies. Every member derives the same layout from
// (length, size), so a piece's ordinal names it on the wire ("chunk" field).
struct PieceLayout {
  struct Piece {
    size_t begin = 0;
    size_t length = 0;
  };
  std::vector<Piece> pieces;        // all pieces, chunk by chunk
  std::vector<size_t> first_piece;  // first_piece[c] .. first_piece[c + 1] belong to chunk c

  PieceLayout(size_t length, int size) {
    const size_t members = static_cast<size_t>(size);
    const size_t base = length / members;
    const size_t extra = length % members;
    size_t begin = 0;
    for (size_t chunk = 0; chunk < members; ++chunk) {
      first_piece.push_back(pieces.size());
      const size_t chunk_length = base + (chunk < extra ? 1 : 0);
      // An empty chunk still travels as one empty piece, so every step has traffic
      // and a member with a different length is noticed.
      size_t offset = 0;
      do {
        const size_t piece = std::min(kRingPieceFloats, chunk_length - offset);
        pieces.push_back({begin + offset, piece});
        offset += piece;
      } while (offset < chunk_length);
      begin += chunk_length;
    }
    first_piece.push_back(pieces.size());
  }
};

// target[i] += frame[i]. Frames are malloc'd or hold a vector's storage, so they are
// aligned for float except tiny ones ZeroMQ keeps inside the message object.
void AddFrame(const zmq::message_t& frame, std::span<float> target) {
  const size_t count = target.size();
  if (reinterpret_cast<uintptr_t>(frame.data()) % alignof(float) == 0) {
    const float* values = static_cast<const float*>(frame.data());
    for (size_t i = 0; i < count; ++i) target[i] += values[i];
    return;
  }
  std::vector<float> values(count);
  std::memcpy(values.data(), frame.data(), count * sizeof(float));
  for (size_t i = 0; i < count; ++i) target[i] += values[i];
}

int Modulo(int value, int size) { return ((value % size) + size) % size; }

}  // namespace

std::expected<void, std::string> RingAllReduce(RingLinks& links, std::span<float> data) {
  const int size = links.size();
  const int rank = links.rank();
  if (size == 1) return {};
  const uint64_t op_id = links.NextOperation();
  const PieceLayout layout(data.size(), size);
  // 2(size-1) steps: in step t a member sends chunk (rank - t) and receives chunk
  // (rank - t - 1) mod size. The first size-1 steps add the received piece to its
  // own (reduce-scatter); after them a member holds the full sum of chunk rank+1,
  // and the last size-1 steps pass the finished chunks on (all-gather). What is
  // received in step t is exactly what is sent in step t+1, so each piece is
  // forwarded as soon as it is complete.
  const int steps = 2 * (size - 1);
  const int first_chunk = rank;
  for (size_t p = layout.first_piece[first_chunk]; p < layout.first_piece[first_chunk + 1]; ++p) {
    const auto& piece = layout.pieces[p];
    auto sent =
        links.SendToNext(op_id, 0, static_cast<int>(p), data.subspan(piece.begin, piece.length));
    if (!sent) return std::unexpected("all-reduce: " + sent.error());
  }
  for (int step = 0; step < steps; ++step) {
    const int chunk = Modulo(rank - step - 1, size);
    const bool reducing = step < size - 1;
    for (size_t p = layout.first_piece[chunk]; p < layout.first_piece[chunk + 1]; ++p) {
      const auto& piece = layout.pieces[p];
      auto frame = links.ReceiveFrameFromPrevious(op_id, step, static_cast<int>(p));
      if (!frame) return std::unexpected("all-reduce: " + frame.error());
      if (frame->size() != piece.length * sizeof(float)) {
        return std::unexpected(fmt::format(
            "all-reduce: ring '{}' rank {}: op {} step {} piece {} from rank {} holds {} floats, "
            "expected {}: every member must reduce a buffer of the same length ({} here)",
            links.options().ring, rank, op_id, step, p, Modulo(rank - 1, size),
            frame->size() / sizeof(float), piece.length, data.size()));
      }
      std::span<float> target = data.subspan(piece.begin, piece.length);
      if (reducing) {
        AddFrame(*frame, target);
      } else if (piece.length > 0) {
        std::memcpy(target.data(), frame->data(), frame->size());
      }
      if (step + 1 == steps) continue;
      // A reduced piece is new data; a finished one is passed on as received.
      auto sent =
          reducing ? links.SendToNext(op_id, step + 1, static_cast<int>(p), target)
                   : links.SendFrameToNext(op_id, step + 1, static_cast<int>(p), std::move(*frame));
      if (!sent) return std::unexpected("all-reduce: " + sent.error());
    }
  }
  return {};
}

}  // namespace actex
