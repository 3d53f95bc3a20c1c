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
#include "transport/ring_links_state.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {

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

}  // namespace actex
