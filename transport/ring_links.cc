#include "transport/ring_links.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string_view>
#include <utility>

#include "transport/connection_watch.h"
#include "transport/interrupted.h"
#include "transport/numeric_endpoint.h"
#include "transport/ring_inbox.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {

namespace {

// A flood of strangers' messages must not flood the log as well.
bool ShouldLogDrop(uint64_t dropped) { return dropped <= 10 || dropped % 1000 == 0; }

}  // namespace

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

  void Drop(std::string reason) {
    ++dropped;
    if (ShouldLogDrop(dropped)) {
      spdlog::warn("{}: dropped a message ({} so far): {}", Who(), dropped, reason);
    }
    last_drop_reason = std::move(reason);
  }

  // Counts (and logs) the connections the tcp ingress refused since the last call.
  void DrainIngressWatch() {
    if (!ingress_watch) return;
    for (const ConnectionEvent& event : ingress_watch->Drain()) {
      if (event.kind != ConnectionEvent::Kind::kHandshakeFailed) continue;
      ++refused_connections;
      if (ShouldLogDrop(refused_connections)) {
        spdlog::warn(
            "{}: refused a connection on {} that failed the ZeroMQ handshake: not ZeroMQ, or "
            "without this job's key ({} so far)",
            Who(), bound_endpoint, refused_connections);
      }
    }
  }

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

RingLinks::RingLinks() : state_(std::make_unique<State>()) {}
RingLinks::~RingLinks() = default;

std::expected<std::unique_ptr<RingLinks>, std::string> RingLinks::Bind(zmq::context_t& context,
                                                                       RingOptions options) {
  const std::string who = fmt::format("ring '{}' rank {}", options.ring, options.rank);
  if (options.ring.empty()) return std::unexpected("ring options: the ring needs a name");
  if (options.endpoints.empty()) {
    return std::unexpected(fmt::format("{}: no endpoints given", who));
  }
  if (options.rank < 0 || options.rank >= static_cast<int>(options.endpoints.size())) {
    return std::unexpected(fmt::format("{}: rank outside [0, {})", who, options.endpoints.size()));
  }
  for (const std::string& endpoint : options.endpoints) {
    if (!endpoint.starts_with("inproc://") && !endpoint.starts_with("tcp://")) {
      return std::unexpected(fmt::format(
          "{}: endpoint '{}' is neither inproc://NAME nor tcp://HOST:PORT", who, endpoint));
    }
  }
  if (options.timeout <= std::chrono::milliseconds(0) || options.high_water_mark <= 0) {
    return std::unexpected(fmt::format("{}: timeout and high_water_mark must be positive", who));
  }

  std::unique_ptr<RingLinks> links(new RingLinks());
  State& state = *links->state_;
  state.context = &context;
  state.options = std::move(options);
  state.stash.emplace(state.options.max_stashed_chunks, state.options.max_stashed_bytes);
  const std::string& endpoint = state.options.endpoints[state.options.rank];
  try {
    state.from_previous = zmq::socket_t(context, zmq::socket_type::pull);
    state.from_previous.set(zmq::sockopt::linger, 0);
    state.from_previous.set(zmq::sockopt::rcvhwm, state.options.high_water_mark);
    // A tcp peer cannot make the receiver allocate more than the wire accepts.
    state.from_previous.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxPayloadFrameBytes));
    if (state.options.security && endpoint.starts_with("tcp://")) {
      if (auto secured = state.options.security->ApplyServer(state.from_previous); !secured) {
        return std::unexpected(fmt::format("{}: ingress: {}", who, secured.error()));
      }
    }
    RetryInterrupted([&] { state.from_previous.bind(endpoint); });
    state.bound_endpoint = state.from_previous.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return std::unexpected(fmt::format("{}: cannot bind '{}': {}", who, endpoint, e.what()));
  }
  if (endpoint.starts_with("tcp://")) {
    auto watch = ConnectionWatch::Create(context, state.from_previous);
    if (!watch) return std::unexpected(fmt::format("{}: ingress: {}", who, watch.error()));
    state.ingress_watch = std::move(*watch);
  }
  return links;
}

std::expected<void, std::string> RingLinks::ConnectToNext(const std::string& endpoint) {
  State& state = *state_;
  if (state.connected) {
    return std::unexpected(fmt::format("{}: already connected to its successor", state.Who()));
  }
  try {
    state.to_next = zmq::socket_t(*state.context, zmq::socket_type::push);
    state.to_next.set(zmq::sockopt::linger, static_cast<int>(state.options.linger.count()));
    state.to_next.set(zmq::sockopt::sndhwm, state.options.high_water_mark);
    state.to_next.set(zmq::sockopt::sndtimeo, static_cast<int>(state.options.timeout.count()));
    // Queue on the connection even before the successor is up (immediate = 0), so
    // members may start in any order; a missing successor shows up as a timeout.
    state.to_next.set(zmq::sockopt::immediate, false);
    state.to_next.set(zmq::sockopt::reconnect_ivl, 20);
    state.to_next.set(zmq::sockopt::reconnect_ivl_max, 1000);
    if (state.options.security && endpoint.starts_with("tcp://")) {
      if (auto secured = state.options.security->ApplyClient(state.to_next); !secured) {
        return std::unexpected(fmt::format("{}: link to rank {}: {}", state.Who(),
                                           state.next_rank(), secured.error()));
      }
    }
    RetryInterrupted([&] { state.to_next.connect(NumericEndpoint(endpoint)); });
  } catch (const zmq::error_t& e) {
    return std::unexpected(fmt::format("{}: cannot connect to rank {} at '{}': {}", state.Who(),
                                       state.next_rank(), endpoint, e.what()));
  }
  state.options.endpoints[state.next_rank()] = endpoint;
  state.connected = true;
  return {};
}

std::expected<std::unique_ptr<RingLinks>, std::string> RingLinks::Create(zmq::context_t& context,
                                                                         RingOptions options) {
  auto links = Bind(context, std::move(options));
  if (!links) return links;
  const State& state = *(*links)->state_;
  if (auto connected = (*links)->ConnectToNext(state.options.endpoints[state.next_rank()]);
      !connected) {
    return std::unexpected(connected.error());
  }
  return links;
}

const std::string& RingLinks::bound_endpoint() const { return state_->bound_endpoint; }
int RingLinks::rank() const { return state_->options.rank; }
int RingLinks::size() const { return state_->size(); }
const RingOptions& RingLinks::options() const { return state_->options; }
uint64_t RingLinks::dropped_chunks() const { return state_->dropped; }
uint64_t RingLinks::refused_connections() {
  state_->DrainIngressWatch();
  return state_->refused_connections;
}
size_t RingLinks::stashed_chunks() const { return state_->stash->size(); }

uint64_t RingLinks::NextOperation() { return state_->next_op_id++; }

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
