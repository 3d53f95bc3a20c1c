#include "actors/cli/monitor_feed.h"

#include <spdlog/fmt/fmt.h>

#include <functional>
#include <msgpack.hpp>
#include <string_view>

#include "transport/interrupted.h"
#include "transport/job_security.h"

namespace actex {

std::string MonitorFeed::CheckEndpoint(const std::string& endpoint) {
  const std::string usage = "expected tcp://HOST:PORT or ipc://PATH, got \"" + endpoint + "\"";
  if (endpoint.starts_with("ipc://")) {
    return endpoint.size() > 6 ? "" : usage + " (no path)";
  }
  if (!endpoint.starts_with("tcp://")) return usage;
  const size_t colon = endpoint.rfind(':');
  if (colon <= 6 || colon + 1 == endpoint.size()) return usage + " (no host or no port)";
  for (size_t i = colon + 1; i < endpoint.size(); ++i) {
    if (endpoint[i] < '0' || endpoint[i] > '9') return usage + " (port is not a number)";
  }
  return "";
}

MonitorFeed::MonitorFeed(zmq::context_t& context) : socket_(context, zmq::socket_type::sub) {}

std::expected<void, std::string> MonitorFeed::Connect(const std::vector<std::string>& endpoints,
                                                      const std::string& job_key_file) {
  if (!job_key_file.empty()) {
    auto security = JobSecurity::FromKeyFile(job_key_file);
    if (!security) return std::unexpected("--job-key-file: " + security.error());
    if (auto secured = (*security)->ApplyClient(socket_); !secured) return secured;
  }
  std::string endpoint;
  try {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::subscribe, "");
    for (const std::string& each : endpoints) {
      endpoint = each;
      RetryInterrupted([&] { socket_.connect(endpoint); });
      endpoints_.insert(endpoint);
      named_ += (named_.empty() ? "" : " ") + endpoint;
    }
  } catch (const zmq::error_t& e) {
    return std::unexpected(fmt::format("cannot connect to {}: {}", endpoint, e.what()));
  }
  return {};
}

std::expected<bool, std::string> MonitorFeed::Follow(const std::string& endpoint) {
  if (endpoints_.contains(endpoint)) return false;
  if (!endpoint.starts_with("tcp://") || !CheckEndpoint(endpoint).empty()) {
    return std::unexpected(fmt::format("not a tcp://HOST:PORT endpoint: \"{}\"", endpoint));
  }
  if (followed_ == kMaxFollowed) {
    return std::unexpected(
        fmt::format("{} endpoints followed already; not {}", kMaxFollowed, endpoint));
  }
  try {
    RetryInterrupted([&] { socket_.connect(endpoint); });
  } catch (const zmq::error_t& e) {
    return std::unexpected(fmt::format("cannot connect to {}: {}", endpoint, e.what()));
  }
  endpoints_.insert(endpoint);
  ++followed_;
  return true;
}

bool MonitorFeed::FirstCopy(const MonitorEventMessage& event) {
  // Both relays forward a node's frames unchanged, so a copy packs to the same bytes;
  // two events of one host differ at least in their time.
  msgpack::sbuffer packed;
  msgpack::pack(packed, event);
  const uint64_t digest = std::hash<std::string_view>{}({packed.data(), packed.size()});
  if (!seen_.insert(digest).second) return false;
  seen_order_.push_back(digest);
  if (seen_order_.size() > kRemembered) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
  return true;
}

}  // namespace actex
