#ifndef ACTEX_TRANSPORT_WIRE_H_
#define ACTEX_TRANSPORT_WIRE_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include <msgpack.hpp>
#include <zmq.hpp>

#include "transport/schema.h"

namespace actex {

// A message on the wire is one multipart ZeroMQ message:
//   frame 0  envelope: msgpack map {"v": kSchemaVersion, "t": type id}
//   frame 1  body: the struct as a msgpack map
//   frame 2… raw payload frames (bulk float/int data), never msgpack-encoded
// Anything else (wrong frame count, bad msgpack, other version, unknown type) is
// refused by Receive with a message that says what was wrong, and never crashes.

struct ReceivedMessage {
  MessageType type{};
  msgpack::object_handle body;
  std::vector<zmq::message_t> payloads;

  // Decodes the body as T, refusing a different type id or a body of the wrong shape.
  template <typename T>
  std::expected<T, std::string> As() const {
    if (type != T::kType) {
      return std::unexpected("expected message type " + std::to_string(int(T::kType)) +
                             ", got " + std::to_string(int(type)));
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

// Receives one whole multipart message. With a timeout, returns std::nullopt when
// nothing arrived in time.
std::expected<ReceivedMessage, std::string> Receive(zmq::socket_t& socket);
std::expected<std::optional<ReceivedMessage>, std::string> Receive(
    zmq::socket_t& socket, std::chrono::milliseconds timeout);

// A zero-copy frame that takes ownership of `data`.
zmq::message_t PayloadFrame(std::vector<float>&& data);
zmq::message_t PayloadFrame(const void* data, size_t bytes);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_WIRE_H_
