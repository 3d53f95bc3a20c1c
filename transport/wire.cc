#include "transport/wire.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include "transport/interrupted.h"
#include "transport/message_types.h"
#include "transport/msgpack_frame.h"

namespace actex {
namespace {

// Reads {"v": version, "t": type id}; other keys are ignored so the envelope can grow.
std::expected<MessageType, std::string> DecodeEnvelope(const zmq::message_t& frame) {
  auto decoded = DecodeMsgpackFrame(frame, "envelope", kMaxEnvelopeBytes);
  if (!decoded) return std::unexpected(decoded.error());
  const msgpack::object& envelope = decoded->get();
  if (envelope.type != msgpack::type::MAP) {
    return std::unexpected("envelope frame is not a msgpack map");
  }
  std::optional<uint64_t> version;
  std::optional<uint64_t> type_id;
  for (const auto& pair : envelope.via.map) {
    if (pair.key.type != msgpack::type::STR) continue;
    const std::string_view key(pair.key.via.str.ptr, pair.key.via.str.size);
    if (key != "v" && key != "t") continue;
    if (pair.val.type != msgpack::type::POSITIVE_INTEGER) {
      return std::unexpected(fmt::format("envelope \"{}\" is not a non-negative integer", key));
    }
    (key == "v" ? version : type_id) = pair.val.via.u64;
  }
  if (!version) return std::unexpected("envelope has no \"v\" (schema version)");
  if (!type_id) return std::unexpected("envelope has no \"t\" (message type id)");
  if (*version != kSchemaVersion) {
    return std::unexpected(fmt::format(
        "schema version {} seen, expected {}: sender and receiver are different actex builds",
        *version, kSchemaVersion));
  }
  if (!DescribeMessageType(*type_id)) {
    return std::unexpected(fmt::format("unknown message type id {}", *type_id));
  }
  return static_cast<MessageType>(*type_id);
}

std::expected<void, std::string> CheckBodyFields(MessageType type, const msgpack::object& body) {
  if (body.type != msgpack::type::MAP) {
    return std::unexpected(fmt::format("{} body is not a msgpack map", MessageTypeName(type)));
  }
  // One pass, no allocation per key: a hostile body may hold millions of them.
  const std::vector<std::string>& required =
      *DescribeMessageType(static_cast<uint64_t>(type))->fields;
  std::vector<bool> present(required.size(), false);
  for (const auto& pair : body.via.map) {
    if (pair.key.type != msgpack::type::STR) {
      return std::unexpected(
          fmt::format("{} body has a key that is not a string", MessageTypeName(type)));
    }
    const std::string_view key(pair.key.via.str.ptr, pair.key.via.str.size);
    for (size_t i = 0; i < required.size(); ++i) {
      if (key == required[i]) present[i] = true;
    }
  }
  for (size_t i = 0; i < required.size(); ++i) {
    if (!present[i]) {
      return std::unexpected(
          fmt::format("{} body lacks field \"{}\"", MessageTypeName(type), required[i]));
    }
  }
  return {};
}

std::unexpected<WireError> Malformed(std::string detail) {
  return std::unexpected(WireError{WireError::Kind::kMalformed, "malformed message: " + detail});
}

constexpr char kNoRoom[] = "send timed out: the peer is not reading (queue full) or absent";

// Sends one frame, retrying when a signal interrupts the call; false when the socket
// had no room for it (at once with dontwait, or once its send timeout passed).
std::expected<bool, std::string> SendFrame(zmq::socket_t& socket, zmq::message_t& frame,
                                           zmq::send_flags flags) {
  try {
    return RetryInterrupted([&] { return socket.send(frame, flags); }).has_value();
  } catch (const zmq::error_t& e) {
    return std::unexpected(std::string("send failed: ") + e.what());
  }
}

// Receives one frame (blocking), retrying when a signal interrupts the call.
std::expected<void, WireError> ReceiveFrame(zmq::socket_t& socket, zmq::message_t& frame) {
  try {
    if (RetryInterrupted([&] { return socket.recv(frame, zmq::recv_flags::none); })) return {};
    return std::unexpected(WireError{WireError::Kind::kTimedOut, "receive timed out"});
  } catch (const zmq::error_t& e) {
    return std::unexpected(
        WireError{WireError::Kind::kSocket, std::string("receive failed: ") + e.what()});
  }
}

}  // namespace

std::string PackEnvelope(uint64_t version, uint64_t type) {
  msgpack::sbuffer envelope;
  msgpack::packer<msgpack::sbuffer> packer(envelope);
  packer.pack_map(2);
  packer.pack(std::string_view("v"));
  packer.pack(version);
  packer.pack(std::string_view("t"));
  packer.pack(type);
  return std::string(envelope.data(), envelope.size());
}

namespace {

// SendEncoded and TrySendEncoded: the checks, then the frames. With `wait` false the
// first frame is offered without waiting, and false (nothing sent) means it found no
// room; true means the whole message was queued.
std::expected<bool, std::string> SendMessage(zmq::socket_t& socket, MessageType type,
                                             const msgpack::sbuffer& body,
                                             std::vector<zmq::message_t>& payloads, bool wait) {
  if (body.size() > kMaxBodyBytes) {
    return std::unexpected(fmt::format("{} body of {} bytes exceeds the limit of {}",
                                       MessageTypeName(type), body.size(), kMaxBodyBytes));
  }
  if (payloads.size() > kMaxPayloadFrames) {
    return std::unexpected(fmt::format("{} has {} payload frames, more than the limit of {}",
                                       MessageTypeName(type), payloads.size(), kMaxPayloadFrames));
  }
  for (const zmq::message_t& payload : payloads) {
    if (payload.size() > kMaxPayloadFrameBytes) {
      return std::unexpected(fmt::format("{} payload frame of {} bytes exceeds the limit of {}",
                                         MessageTypeName(type), payload.size(),
                                         kMaxPayloadFrameBytes));
    }
  }
  const std::string envelope = PackEnvelope(kSchemaVersion, static_cast<uint16_t>(type));
  zmq::message_t envelope_frame(envelope.data(), envelope.size());
  zmq::message_t body_frame(body.data(), body.size());
  // ZeroMQ queues the parts of a multipart message atomically: once the first part
  // is accepted the others cannot time out, so a failure never leaves half a message.
  const auto failed = [&](const std::string& why) {
    return std::unexpected(fmt::format("{}: {}", MessageTypeName(type), why));
  };
  const auto first_flags =
      wait ? zmq::send_flags::sndmore : zmq::send_flags::sndmore | zmq::send_flags::dontwait;
  auto first = SendFrame(socket, envelope_frame, first_flags);
  if (!first) return failed(first.error());
  if (!*first) {
    if (!wait) return false;
    return failed(kNoRoom);
  }
  const auto body_flags = payloads.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore;
  if (auto sent = SendFrame(socket, body_frame, body_flags); !sent || !*sent) {
    return failed(sent ? kNoRoom : sent.error());
  }
  for (size_t i = 0; i < payloads.size(); ++i) {
    const auto flags = i + 1 < payloads.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    if (auto sent = SendFrame(socket, payloads[i], flags); !sent || !*sent) {
      return failed(sent ? kNoRoom : sent.error());
    }
  }
  return true;
}

}  // namespace

std::expected<void, std::string> SendEncoded(zmq::socket_t& socket, MessageType type,
                                             const msgpack::sbuffer& body,
                                             std::vector<zmq::message_t> payloads) {
  auto sent = SendMessage(socket, type, body, payloads, /*wait=*/true);
  if (!sent) return std::unexpected(std::move(sent.error()));
  return {};
}

std::expected<bool, std::string> TrySendEncoded(zmq::socket_t& socket, MessageType type,
                                                const msgpack::sbuffer& body,
                                                std::vector<zmq::message_t>& payloads) {
  return SendMessage(socket, type, body, payloads, /*wait=*/false);
}

std::expected<ReceivedMessage, WireError> Receive(zmq::socket_t& socket) {
  // Drain the whole multipart message first, keeping at most what the limits allow,
  // so that a refusal below never leaves frames behind for the next Receive.
  constexpr size_t kMaxFrames = 2 + kMaxPayloadFrames;
  std::vector<zmq::message_t> frames;
  size_t frame_count = 0;
  std::string oversized;
  bool more = true;
  while (more) {
    zmq::message_t frame;
    if (auto received = ReceiveFrame(socket, frame); !received) {
      return std::unexpected(received.error());
    }
    more = frame.more();
    if (frame_count >= 2 && frame.size() > kMaxPayloadFrameBytes && oversized.empty()) {
      oversized = fmt::format("payload frame {} has {} bytes, more than the limit of {}",
                              frame_count - 2, frame.size(), kMaxPayloadFrameBytes);
    }
    if (++frame_count <= kMaxFrames) frames.push_back(std::move(frame));
  }
  if (frame_count < 2) {
    return Malformed(fmt::format("{} frame(s), expected an envelope and a body", frame_count));
  }
  if (frame_count > kMaxFrames) {
    return Malformed(
        fmt::format("{} payload frames, limit {}", frame_count - 2, kMaxPayloadFrames));
  }
  if (!oversized.empty()) return Malformed(oversized);
  return DecodeMessage(std::move(frames));
}

std::expected<ReceivedMessage, WireError> DecodeMessage(std::vector<zmq::message_t> frames) {
  if (frames.size() < 2) {
    return Malformed(fmt::format("{} frame(s), expected an envelope and a body", frames.size()));
  }
  if (frames.size() > 2 + kMaxPayloadFrames) {
    return Malformed(
        fmt::format("{} payload frames, limit {}", frames.size() - 2, kMaxPayloadFrames));
  }
  for (size_t i = 2; i < frames.size(); ++i) {
    if (frames[i].size() > kMaxPayloadFrameBytes) {
      return Malformed(fmt::format("payload frame {} has {} bytes, more than the limit of {}",
                                   i - 2, frames[i].size(), kMaxPayloadFrameBytes));
    }
  }
  auto type = DecodeEnvelope(frames[0]);
  if (!type) return Malformed(type.error());
  auto body =
      DecodeMsgpackFrame(frames[1], fmt::format("{} body", MessageTypeName(*type)), kMaxBodyBytes);
  if (!body) return Malformed(body.error());
  if (auto fields = CheckBodyFields(*type, body->get()); !fields) {
    return Malformed(fields.error());
  }
  ReceivedMessage message;
  message.type = *type;
  message.body = std::move(*body);
  message.source_fd = zmq_msg_get(frames[0].handle(), ZMQ_SRCFD);
  message.payloads.reserve(frames.size() - 2);
  for (size_t i = 2; i < frames.size(); ++i) message.payloads.push_back(std::move(frames[i]));
  return message;
}

std::expected<std::optional<ReceivedMessage>, WireError> Receive(zmq::socket_t& socket,
                                                                 std::chrono::milliseconds timeout,
                                                                 zmq::socket_t* interrupt) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The interrupt comes first: when both are readable, the owner wants to stop.
  zmq::pollitem_t items[2];
  int count = 0;
  if (interrupt != nullptr) items[count++] = {interrupt->handle(), 0, ZMQ_POLLIN, 0};
  zmq::pollitem_t& message_item = items[count++];
  message_item = {socket.handle(), 0, ZMQ_POLLIN, 0};
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    try {
      zmq::poll(items, count, std::max(left, std::chrono::milliseconds(0)));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal; wait for the time that is left
      return std::unexpected(
          WireError{WireError::Kind::kSocket, std::string("poll failed: ") + e.what()});
    }
    if (interrupt != nullptr && (items[0].revents & ZMQ_POLLIN) != 0) {
      return std::unexpected(WireError{WireError::Kind::kInterrupted, "interrupted"});
    }
    if ((message_item.revents & ZMQ_POLLIN) != 0) break;
    if (left <= std::chrono::milliseconds(0)) return std::optional<ReceivedMessage>();
  }
  auto message = Receive(socket);
  if (!message) return std::unexpected(message.error());
  return std::optional<ReceivedMessage>(std::move(*message));
}

namespace {

// A zero-copy frame owning `data`: ZeroMQ deletes the vector when done with it.
template <typename Element>
zmq::message_t OwningFrame(std::vector<Element>&& data) {
  if (data.empty()) return zmq::message_t();
  auto owned = std::make_unique<std::vector<Element>>(std::move(data));
  auto free_vector = [](void*, void* hint) { delete static_cast<std::vector<Element>*>(hint); };
  zmq::message_t frame(owned->data(), owned->size() * sizeof(Element), free_vector, owned.get());
  owned.release();  // ZeroMQ owns it now and calls free_vector when done
  return frame;
}

// A copy of a frame of 4-byte `Element`s (`what` names them in the error).
template <typename Element>
std::expected<std::vector<Element>, std::string> ElementsFromFrame(const zmq::message_t& frame,
                                                                   const char* what) {
  if (frame.size() % sizeof(Element) != 0) {
    return std::unexpected(fmt::format("{} frame has {} bytes, not a multiple of {}", what,
                                       frame.size(), sizeof(Element)));
  }
  std::vector<Element> values(frame.size() / sizeof(Element));
  if (!values.empty()) std::memcpy(values.data(), frame.data(), frame.size());
  return values;
}

}  // namespace

zmq::message_t PayloadFrame(std::vector<float>&& data) { return OwningFrame(std::move(data)); }
zmq::message_t PayloadFrame(std::vector<int32_t>&& data) { return OwningFrame(std::move(data)); }

zmq::message_t PayloadFrame(const void* data, size_t bytes) { return zmq::message_t(data, bytes); }

std::expected<std::vector<float>, std::string> FloatsFromFrame(const zmq::message_t& frame) {
  return ElementsFromFrame<float>(frame, "float32");
}

std::expected<std::vector<int32_t>, std::string> Int32sFromFrame(const zmq::message_t& frame) {
  return ElementsFromFrame<int32_t>(frame, "int32");
}

}  // namespace actex
