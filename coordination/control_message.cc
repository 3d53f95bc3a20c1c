#include "coordination/control_message.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/fmt/fmt.h>
#include <sys/socket.h>
#include <zmq.h>

#include "transport/interrupted.h"

namespace actex {

std::string PeerAddress(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (fd < 0 || ::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return "an unknown address";
  }
  char host[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
    return fmt::format("{}:{}", host, ntohs(v4->sin_port));
  }
  if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
    return fmt::format("[{}]:{}", host, ntohs(v6->sin6_port));
  }
  return "an unknown address";
}

std::expected<std::optional<ControlMessage>, std::string> ReceiveControl(zmq::socket_t& socket) {
  zmq::message_t identity;
  try {
    const int events = RetryInterrupted([&] { return socket.get(zmq::sockopt::events); });
    if ((events & ZMQ_POLLIN) == 0) return std::nullopt;
    if (!RetryInterrupted([&] { return socket.recv(identity, zmq::recv_flags::dontwait); })) {
      return std::nullopt;
    }
  } catch (const zmq::error_t& e) {
    return std::unexpected(std::string("receive failed: ") + e.what());
  }
  ControlMessage control{identity.to_string(), -1, "an unknown address",
                         std::unexpected(WireError())};
  if (!identity.more()) {
    control.message = std::unexpected(
        WireError{WireError::Kind::kMalformed,
                  "malformed message: 0 frame(s), expected an envelope and a body"});
    return control;
  }
  control.message = Receive(socket);
  if (!control.message && !control.message.error().malformed()) {
    return std::unexpected(control.message.error().message);
  }
  // The routing id frame carries no connection metadata when poll prefetched the
  // message, so the connection is learned from the envelope frame.
  if (control.message) {
    control.fd = control.message->source_fd;
    control.address = PeerAddress(control.fd);
  }
  return control;
}

}  // namespace actex
