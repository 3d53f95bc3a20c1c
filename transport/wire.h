#ifndef ACTEX_TRANSPORT_WIRE_H_
#define ACTEX_TRANSPORT_WIRE_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "transport/message_types.h"
#include "transport/schema.h"

namespace actex {

// A message on the wire is one multipart ZeroMQ message:
//   frame 0  envelope: msgpack map {"v": kSchemaVersion, "t": type id}
//   frame 1  body: the struct as a msgpack map
//   frame 2… raw payload frames (bulk float/int data), never msgpack-encoded
// Anything else (wrong frame count, bad msgpack, other version, unknown type) is
// refused by Receive with a message that says what was wrong, and never crashes.
// A refused message is always consumed whole (every frame drained), so the next
// Receive starts at the next message.

// What Receive accepts; PROTOCOL.md "Limits" explains each. SendEncoded refuses to
// send what a receiver would refuse.
inline constexpr size_t kMaxEnvelopeBytes = 256;
inline constexpr size_t kMaxBodyBytes = size_t{64} << 20;
inline constexpr size_t kMaxPayloadFrames = 1024;
inline constexpr size_t kMaxPayloadFrameBytes = size_t{1} << 30;

// Why a message could not be received. Callers act on the kind: a peer's bad message
// is dropped and the receiver goes on, a failed socket ends the conversation. The
// message says what happened, for people, and never steers the code.
struct WireError {
  enum class Kind {
    kMalformed,    // the message broke the format or a limit; it was consumed whole
    kTimedOut,     // the socket's own receive timeout passed mid-message
    kSocket,       // the socket failed (its context is ending, ...)
    kInterrupted,  // the owner asked the wait to end (RingLinks' interrupt socket)
  };
  Kind kind = Kind::kSocket;
  std::string message;  // "malformed message: ...", "receive failed: ..."

  bool malformed() const { return kind == Kind::kMalformed; }
};

struct ReceivedMessage {
  MessageType type{};
  msgpack::object_handle body;
  std::vector<zmq::message_t> payloads;
  // The tcp connection the message came over (ZMQ_SRCFD of its envelope frame, for
  // getpeername or to match a connection event), -1 for other transports.
  int source_fd = -1;

  // Decodes the body as T, refusing a different type id or a body of the wrong shape.
  template <typename T>
  std::expected<T, std::string> As() const {
    if (type != T::kType) {
      return std::unexpected("expected message type " + std::to_string(int(T::kType)) + ", got " +
                             std::to_string(int(type)));
    }
    try {
      T value;
      body.get().convert(value);
      return value;
    } catch (const std::exception& e) {
      return std::unexpected(std::string("malformed message body: ") + e.what());
    }
  }
};

// The envelope frame {"v": version, "t": type}, each integer in msgpack's shortest
// form. SendEncoded writes (kSchemaVersion, type); tests write other pairs to see
// Receive refuse them.
std::string PackEnvelope(uint64_t version, uint64_t type);

// Encodes `body` (any schema struct) with its envelope and sends it, followed by
// `payloads`. Blocks while the peer's queue is at its high-water mark.
std::expected<void, std::string> SendEncoded(zmq::socket_t& socket, MessageType type,
                                             const msgpack::sbuffer& body,
                                             std::vector<zmq::message_t> payloads);

template <typename T>
std::expected<void, std::string> Send(zmq::socket_t& socket, const T& message,
                                      std::vector<zmq::message_t> payloads = {}) {
  msgpack::sbuffer body;
  msgpack::pack(body, message);
  return SendEncoded(socket, T::kType, body, std::move(payloads));
}

// SendEncoded without waiting: false, with nothing sent and `payloads` untouched, when
// the peer's queue has no room or no peer is connected; true once the whole message
// is queued. For a sender that waits for room itself, hearing other sockets meanwhile
// (a poll's POLLOUT can be stale by the time it sends: the peer may have left).
std::expected<bool, std::string> TrySendEncoded(zmq::socket_t& socket, MessageType type,
                                                const msgpack::sbuffer& body,
                                                std::vector<zmq::message_t>& payloads);

template <typename T>
std::expected<bool, std::string> TrySend(zmq::socket_t& socket, const T& message,
                                         std::vector<zmq::message_t>& payloads) {
  msgpack::sbuffer body;
  msgpack::pack(body, message);
  return TrySendEncoded(socket, T::kType, body, payloads);
}

// Decodes one whole multipart message already taken off a socket, every frame in
// order, with the checks (and errors) of Receive. For a relay that forwards only
// what a receiver would accept.
std::expected<ReceivedMessage, WireError> DecodeMessage(std::vector<zmq::message_t> frames);

// Receives one whole multipart message. With a timeout, returns std::nullopt when
// nothing arrived in time; with an `interrupt` socket too, fails with kind
// kInterrupted as soon as that socket is readable (leaving it unread), even when a
// message is waiting as well.
std::expected<ReceivedMessage, WireError> Receive(zmq::socket_t& socket);
std::expected<std::optional<ReceivedMessage>, WireError> Receive(
    zmq::socket_t& socket, std::chrono::milliseconds timeout, zmq::socket_t* interrupt = nullptr);

// A zero-copy frame that takes ownership of `data` (freed when ZeroMQ is done with it).
zmq::message_t PayloadFrame(std::vector<float>&& data);
zmq::message_t PayloadFrame(std::vector<int32_t>&& data);
// A frame holding a copy of `bytes` bytes at `data`.
zmq::message_t PayloadFrame(const void* data, size_t bytes);

// Copies a raw float32 (int32) frame out, refusing a size that is not a multiple of 4.
std::expected<std::vector<float>, std::string> FloatsFromFrame(const zmq::message_t& frame);
std::expected<std::vector<int32_t>, std::string> Int32sFromFrame(const zmq::message_t& frame);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_WIRE_H_
