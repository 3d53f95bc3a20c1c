#ifndef ACTEX_COORDINATION_CONTROL_MESSAGE_H_
#define ACTEX_COORDINATION_CONTROL_MESSAGE_H_

#include <expected>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "transport/wire.h"

namespace actex {

// One message on the coordinator's control ROUTER: who sent it (the routing id), over
// which connection (-1 and "an unknown address" for a malformed one), and what.
struct ControlMessage {
  std::string identity;
  int fd = -1;
  std::string address;
  std::expected<ReceivedMessage, WireError> message;
};

// Reads the routing id frame the ROUTER puts first, then the sender's message, without
// blocking. std::nullopt when nothing is waiting; an unexpected error when the socket
// failed (a malformed message is a ControlMessage carrying the WireError).
std::expected<std::optional<ControlMessage>, std::string> ReceiveControl(zmq::socket_t& socket);

// "10.0.0.12:53122": the remote end of the tcp connection `fd` (of a message just
// received, so the connection is almost surely still open; the address only ever
// appears in messages). "an unknown address" when it cannot be told.
std::string PeerAddress(int fd);

}  // namespace actex

#endif  // ACTEX_COORDINATION_CONTROL_MESSAGE_H_
