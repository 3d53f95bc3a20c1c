#include "transport/zap_authenticator.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <utility>
#include <vector>

#include "base/log_sampling.h"
#include "transport/interrupted.h"

namespace actex {
namespace {

// A ZAP request is 7 frames plus the mechanism's credentials (CURVE: one); libzmq
// never sends more, so anything longer is not a request.
constexpr size_t kMaxRequestFrames = 16;

// Receives one whole multipart message without blocking (the caller polled), keeping
// at most kMaxRequestFrames + 2 frames (routing id, delimiter) and draining the rest.
std::vector<zmq::message_t> ReceiveRequest(zmq::socket_t& socket) {
  std::vector<zmq::message_t> frames;
  for (bool more = true; more;) {
    zmq::message_t frame;
    try {
      if (!socket.recv(frame, frames.empty() ? zmq::recv_flags::dontwait : zmq::recv_flags::none)) {
        break;
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      spdlog::warn("authenticator: receiving a request failed: {}", e.what());
      break;
    }
    more = frame.more();
    if (frames.size() < kMaxRequestFrames + 2) frames.push_back(std::move(frame));
  }
  return frames;
}

std::string_view View(const zmq::message_t& frame) {
  return std::string_view(static_cast<const char*>(frame.data()), frame.size());
}

class Authenticator {
 public:
  explicit Authenticator(ZapPolicy policy) : policy_(std::move(policy)) {}

  std::expected<void, std::string> Run(ActorContext& actor) {
    zmq::socket_t handler;
    try {
      handler = zmq::socket_t(actor.context(), zmq::socket_type::router);
      handler.set(zmq::sockopt::linger, 0);
      RetryInterrupted([&] { handler.bind(kZapEndpoint); });
    } catch (const zmq::error_t& e) {
      return std::unexpected(fmt::format("cannot bind {}: {}", kZapEndpoint, e.what()));
    }
    actor.SignalReady();
    while (true) {
      zmq::pollitem_t items[] = {{actor.pipe().handle(), 0, ZMQ_POLLIN, 0},
                                 {handler.handle(), 0, ZMQ_POLLIN, 0}};
      try {
        zmq::poll(items, 2, std::chrono::milliseconds(-1));
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        return std::unexpected(std::string("poll failed: ") + e.what());
      }
      if ((items[0].revents & ZMQ_POLLIN) != 0 && actor.StopRequested()) return {};
      if ((items[1].revents & ZMQ_POLLIN) != 0) Answer(handler);
    }
  }

 private:
  // Decides one request; replies unless the request is too broken to be answered.
  void Answer(zmq::socket_t& handler) {
    std::vector<zmq::message_t> frames = ReceiveRequest(handler);
    // routing id, empty delimiter, version, request id, domain, address, identity,
    // mechanism, credentials...
    if (frames.size() < 4 || frames[1].size() != 0) {
      Refuse("an unknown peer", "a ZAP request without an envelope (dropped unanswered)");
      return;
    }
    std::string status = "200";
    std::string text = "OK";
    std::string address = frames.size() > 5 ? std::string(View(frames[5])) : "an unknown peer";
    if (address.empty()) address = "an unknown peer";
    if (frames.size() < 8 || View(frames[2]) != "1.0") {
      status = "500";
      text = "malformed ZAP request";
    } else if (View(frames[7]) != "CURVE") {
      status = "400";
      text = fmt::format("mechanism {} instead of CURVE", View(frames[7]).substr(0, 16));
    } else if (View(frames[4]) != policy_.domain) {
      status = "400";
      text = "another ZAP domain";
    } else if (frames.size() != 9 || frames[8].size() != policy_.client_public_key.size() ||
               !std::equal(policy_.client_public_key.begin(), policy_.client_public_key.end(),
                           static_cast<const uint8_t*>(frames[8].data()))) {
      status = "400";
      text = "its CURVE client key is not this job's: it does not hold the job key";
    }
    if (status == "200") {
      ++policy_.counters->accepted;
    } else {
      Refuse(address, text);
    }
    std::vector<zmq::message_t> reply;
    reply.push_back(std::move(frames[0]));
    reply.emplace_back();
    reply.emplace_back(std::string_view("1.0"));
    reply.push_back(std::move(frames[3]));
    reply.emplace_back(std::string_view(status));
    reply.emplace_back(std::string_view(text));
    reply.emplace_back(std::string_view(status == "200" ? "actex-job-member" : ""));
    reply.emplace_back();  // no metadata
    for (size_t i = 0; i < reply.size(); ++i) {
      try {
        handler.send(reply[i], i + 1 < reply.size()
                                   ? zmq::send_flags::sndmore | zmq::send_flags::dontwait
                                   : zmq::send_flags::dontwait);
      } catch (const zmq::error_t& e) {
        spdlog::warn("authenticator: cannot answer a request: {}", e.what());
        return;
      }
    }
  }

  void Refuse(const std::string& address, const std::string& why) {
    const uint64_t count = ++policy_.counters->refused;
    if (ShouldLogOccurrence(count)) {
      spdlog::warn("authenticator: refused a connection from {} ({} refused so far): {}", address,
                   count, why);
    }
  }

  ZapPolicy policy_;
};

}  // namespace

std::expected<std::unique_ptr<Actor>, std::string> StartZapAuthenticator(zmq::context_t& context,
                                                                         ZapPolicy policy) {
  if (!policy.counters) return std::unexpected("authenticator: no counters given");
  return Actor::Start(context, "authenticator", [policy = std::move(policy)](ActorContext& actor) {
    Authenticator authenticator(policy);
    return authenticator.Run(actor);
  });
}

}  // namespace actex
