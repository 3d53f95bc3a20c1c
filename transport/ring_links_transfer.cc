// A ring member's chunks: sent to the successor, received from the predecessor (kept
// when early, refused when foreign), and the counts of what was refused.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "base/log_sampling.h"
#include "transport/interrupted.h"
#include "transport/ring_links.h"
#include "transport/ring_links_state.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {
namespace {}  // namespace

void RingLinks::State::Drop(std::string reason) {
  ++dropped;
  if (ShouldLogOccurrence(dropped)) {
    spdlog::warn("{}: dropped a message ({} so far): {}", Who(), dropped, reason);
  }
  last_drop_reason = std::move(reason);
}

void RingLinks::State::DrainIngressWatch() {
  if (!ingress_watch) return;
  for (const ConnectionEvent& event : ingress_watch->Drain()) {
    if (event.kind != ConnectionEvent::Kind::kHandshakeFailed) continue;
    ++refused_connections;
    if (ShouldLogOccurrence(refused_connections)) {
      spdlog::warn(
          "{}: refused a connection on {} that failed the ZeroMQ handshake: not ZeroMQ, or "
          "without this job's key ({} so far)",
          Who(), bound_endpoint, refused_connections);
    }
  }
}

std::expected<void, std::string> RingLinks::State::AdvanceTo(uint64_t op_id) {
  if (op_id < current_op_id) {
    return std::unexpected(
        fmt::format("{}: asked for op {} after op {}; operations must be "
                    "awaited in the order they were drawn",
                    Who(), op_id, current_op_id));
  }
  if (op_id > current_op_id) {
    current_op_id = op_id;
    stash->ForgetBefore(op_id, [&](const ChunkKey& key) {
      const auto& [stale_op, stale_step, stale_chunk] = key;
      Drop(fmt::format("stashed chunk of op {} step {} chunk {} was never asked for", stale_op,
                       stale_step, stale_chunk));
    });
  }
  return {};
}

std::string RingLinks::State::TimedOut(const ChunkKey& wanted) {
  const auto& [op_id, step, chunk] = wanted;
  std::string meanwhile;
  if (dropped > 0) {
    meanwhile = fmt::format("; {} message(s) were dropped so far, the last because: {}", dropped,
                            last_drop_reason);
  }
  DrainIngressWatch();
  if (refused_connections > 0) {
    meanwhile += fmt::format(
        "; {} connection(s) failed the ZeroMQ handshake (a peer without this job's key?)",
        refused_connections);
  }
  return fmt::format(
      "{}: timed out after {} ms waiting for op {} step {} chunk {} from rank {} ({}){}", Who(),
      options.timeout.count(), op_id, step, chunk, previous_rank(),
      options.endpoints[previous_rank()], meanwhile);
}

std::expected<void, std::string> RingLinks::State::StashAhead(const ChunkKey& key,
                                                              zmq::message_t payload,
                                                              const ChunkKey& wanted) {
  const auto& [key_op, key_step, key_chunk] = key;
  if (stash->Contains(key)) {
    Drop(fmt::format("duplicate chunk of op {} step {} chunk {}", key_op, key_step, key_chunk));
    return {};
  }
  if (stash->WouldOverflow(payload.size())) {
    const auto& [op_id, step, chunk] = wanted;
    return std::unexpected(fmt::format(
        "{}: while waiting for op {} step {} chunk {}, rank {} sent more than {} chunks "
        "({} bytes) ahead; the members disagree on the order of operations",
        Who(), op_id, step, chunk, previous_rank(), stash->size(),
        stash->bytes() + payload.size()));
  }
  stash->Put(key, std::move(payload));
  return {};
}

std::expected<void, std::string> RingLinks::SendFrameToNext(uint64_t op_id, int step, int chunk,
                                                            zmq::message_t frame) {
  State& state = *state_;
  if (!state.connected) {
    return std::unexpected(fmt::format("{}: not connected to its successor yet", state.Who()));
  }
  CollectiveChunkMessage header{state.options.ring, op_id, step, state.options.rank, chunk};
  std::vector<zmq::message_t> payloads;
  payloads.push_back(std::move(frame));
  if (auto sent = Send(state.to_next, header, std::move(payloads)); !sent) {
    return std::unexpected(fmt::format("{}: sending op {} step {} chunk {} to rank {} ({}): {}",
                                       state.Who(), op_id, step, chunk, state.next_rank(),
                                       state.options.endpoints[state.next_rank()], sent.error()));
  }
  return {};
}

std::expected<void, std::string> RingLinks::SendToNext(uint64_t op_id, int step, int chunk,
                                                       std::span<const float> data) {
  return SendFrameToNext(op_id, step, chunk, PayloadFrame(data.data(), data.size_bytes()));
}

std::expected<zmq::message_t, std::string> RingLinks::ReceiveFrameFromPrevious(uint64_t op_id,
                                                                               int step,
                                                                               int chunk) {
  State& state = *state_;
  if (auto advanced = state.AdvanceTo(op_id); !advanced) return std::unexpected(advanced.error());
  state.DrainIngressWatch();
  const ChunkKey wanted{op_id, step, chunk};
  if (auto stashed = state.stash->Take(wanted)) return std::move(*stashed);

  const auto deadline = std::chrono::steady_clock::now() + state.options.timeout;
  for (bool first = true;; first = false) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    // Checked here too, so a flood of strangers' messages cannot postpone it forever.
    if (!first && left <= std::chrono::milliseconds(0)) {
      return std::unexpected(state.TimedOut(wanted));
    }
    auto received = Receive(state.from_previous, std::max(left, std::chrono::milliseconds(0)),
                            state.options.interrupt);
    if (!received) {
      if (received.error().kind == WireError::Kind::kInterrupted) {
        return std::unexpected(
            fmt::format("{}: interrupted while waiting for op {} step {} chunk "
                        "{} from rank {}",
                        state.Who(), op_id, step, chunk, state.previous_rank()));
      }
      // A stranger's garbage is dropped; only the socket itself failing is fatal.
      if (received.error().malformed()) {
        state.Drop(received.error().message);
        continue;
      }
      return std::unexpected(fmt::format("{}: receiving op {} step {} chunk {}: {}", state.Who(),
                                         op_id, step, chunk, received.error().message));
    }
    if (!*received) return std::unexpected(state.TimedOut(wanted));
    ReceivedMessage& message = **received;
    auto key = AcceptChunk(message, state.options.ring, state.previous_rank(), state.current_op_id);
    if (!key) {
      state.Drop(std::move(key.error()));
      continue;
    }
    if (*key == wanted) return std::move(message.payloads[0]);
    if (auto kept = state.StashAhead(*key, std::move(message.payloads[0]), wanted); !kept) {
      return std::unexpected(kept.error());
    }
  }
}

std::expected<std::vector<float>, std::string> RingLinks::ReceiveFromPrevious(uint64_t op_id,
                                                                              int step, int chunk) {
  auto frame = ReceiveFrameFromPrevious(op_id, step, chunk);
  if (!frame) return std::unexpected(frame.error());
  return FloatsFromFrame(*frame);
}

}  // namespace actex
