// Fuzzes wire decoding exactly as a receiving actor meets it: the input becomes one
// multipart ZeroMQ message sent over an inproc PAIR socket, Receive takes it, and
// every schema type's As<T> is tried on what Receive accepts.
//
// Input layout: the frames of one message joined by kFuzzFrameDelimiter (0xC1 0xC1;
// 0xC1 is the one byte msgpack never uses, so the delimiter splits real messages
// only inside string, binary or raw payload bytes). An input without it is a single
// frame.
//
// Invariants checked: Receive never fails other than with a kMalformed error that
// says "malformed message: ..."; it consumes the whole message, refused or not;
// As<T> refuses every type but the received one and refuses bodies only with
// "malformed message body: ..."; an accepted body re-encodes with Send, comes back
// through Receive, and decodes to the same msgpack bytes with the same payload frames.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/wire_dictionary.h"
#include "tests/transport/raw_frames.h"
#include "transport/interrupted.h"
#include "transport/message_types.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {
namespace {

using test_support::PackedBody;

constexpr std::chrono::milliseconds kWait(2000);

// Both ends of an inproc PAIR. One per process: libFuzzer runs inputs one at a time
// and each input leaves the pipe empty (checked), so inputs cannot affect each other.
struct Link {
  zmq::context_t context;
  zmq::socket_t out{context, zmq::socket_type::pair};
  zmq::socket_t in{context, zmq::socket_type::pair};

  Link() {
    for (zmq::socket_t* socket : {&out, &in}) {
      socket->set(zmq::sockopt::linger, 0);
      // A send that would block means the harness broke its own one-message rhythm.
      socket->set(zmq::sockopt::sndtimeo, 2000);
    }
    in.bind("inproc://wire-receive-fuzzer");
    out.connect("inproc://wire-receive-fuzzer");
  }

  // libFuzzer's timeout alarm (SIGALRM) may land while ZeroMQ reads the events, which
  // then throws EINTR: ask again, as the product's Receive does.
  bool HasPendingInput() {
    return (RetryInterrupted([&] { return in.get(zmq::sockopt::events); }) & ZMQ_POLLIN) != 0;
  }
};

std::vector<std::string_view> SplitFrames(std::string_view input) {
  std::vector<std::string_view> frames;
  while (true) {
    const size_t end = input.find(kFuzzFrameDelimiter);
    frames.push_back(input.substr(0, end));
    if (end == std::string_view::npos) return frames;
    input.remove_prefix(end + kFuzzFrameDelimiter.size());
  }
}

void SendRaw(Link& link, const std::vector<std::string_view>& frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    zmq::message_t frame(frames[i].data(), frames[i].size());
    const auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    const bool sent = RetryInterrupted([&] { return link.out.send(frame, flags).has_value(); });
    FUZZ_CHECK(sent, "inproc send of frame %zu timed out", i);
  }
}

bool SameBytes(const zmq::message_t& a, const zmq::message_t& b) {
  return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// Re-sends an accepted `value` with copies of `message`'s payloads and checks that
// it arrives, decodes, and packs to the same bytes.
template <typename T>
void CheckReencodes(Link& link, const ReceivedMessage& message, const T& value) {
  std::vector<zmq::message_t> payloads;
  for (const zmq::message_t& payload : message.payloads) {
    payloads.push_back(PayloadFrame(payload.data(), payload.size()));
  }
  auto sent = Send(link.out, value, std::move(payloads));
  FUZZ_CHECK(sent.has_value(), "re-sending an accepted %s failed: %s", MessageTypeName(T::kType),
             sent.error().c_str());
  auto again = Receive(link.in, kWait);
  FUZZ_CHECK(again.has_value() && again->has_value(), "a re-encoded %s was not received: %s",
             MessageTypeName(T::kType),
             again.has_value() ? "timeout" : again.error().message.c_str());
  const ReceivedMessage& echoed = **again;
  FUZZ_CHECK(echoed.type == T::kType, "re-encoded message changed type");
  FUZZ_CHECK(echoed.payloads.size() == message.payloads.size(), "payload count %zu became %zu",
             message.payloads.size(), echoed.payloads.size());
  for (size_t i = 0; i < echoed.payloads.size(); ++i) {
    FUZZ_CHECK(SameBytes(echoed.payloads[i], message.payloads[i]), "payload %zu changed", i);
  }
  auto decoded = echoed.As<T>();
  FUZZ_CHECK(decoded.has_value(), "a re-encoded %s is refused: %s", MessageTypeName(T::kType),
             decoded.error().c_str());
  FUZZ_CHECK(PackedBody(*decoded) == PackedBody(value), "%s changed in a decode/encode round trip",
             MessageTypeName(T::kType));
}

template <typename T>
void CheckAs(Link& link, const ReceivedMessage& message) {
  auto value = message.As<T>();
  if (message.type != T::kType) {
    FUZZ_CHECK(!value.has_value(), "As<%s> accepted a %s", MessageTypeName(T::kType),
               MessageTypeName(message.type));
    return;
  }
  if (!value.has_value()) {
    FUZZ_CHECK(value.error().starts_with("malformed message body: "), "unexpected refusal: %s",
               value.error().c_str());
    return;
  }
  CheckReencodes(link, message, *value);
}

template <typename... Types>
void CheckEveryType(Link& link, const ReceivedMessage& message, MessageTypeList<Types...>) {
  (CheckAs<Types>(link, message), ...);
}

void CheckPayloads(const ReceivedMessage& message) {
  for (const zmq::message_t& payload : message.payloads) {
    FUZZ_CHECK(payload.size() <= kMaxPayloadFrameBytes, "oversized payload accepted");
    auto floats = FloatsFromFrame(payload);
    FUZZ_CHECK(floats.has_value() == (payload.size() % sizeof(float) == 0),
               "FloatsFromFrame on %zu bytes", payload.size());
    if (floats) FUZZ_CHECK(floats->size() * sizeof(float) == payload.size(), "float count");
  }
}

// One input: see the file comment.
void FuzzOneInput(std::string_view input) {
  static Link& link = *new Link();  // lives until exit, like a process's sockets
  SendRaw(link, SplitFrames(input));
  auto received = Receive(link.in, kWait);
  FUZZ_CHECK(received.has_value() ? received->has_value() : true, "Receive timed out");
  FUZZ_CHECK(!link.HasPendingInput(), "Receive left frames of the message behind");
  if (!received.has_value()) {
    FUZZ_CHECK(received.error().malformed(), "unexpected error: %s",
               received.error().message.c_str());
    FUZZ_CHECK(received.error().message.starts_with("malformed message: "),
               "a refusal does not say so: %s", received.error().message.c_str());
    return;
  }
  const ReceivedMessage& message = **received;
  FUZZ_CHECK(std::string_view(MessageTypeName(message.type)) != "unknown", "accepted type id %d",
             static_cast<int>(message.type));
  FUZZ_CHECK(message.payloads.size() <= kMaxPayloadFrames, "too many payloads accepted");
  CheckPayloads(message);
  CheckEveryType(link, message, AllMessageTypes{});
  FUZZ_CHECK(!link.HasPendingInput(), "a round trip left frames behind");
}

}  // namespace
}  // namespace actex

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  actex::FuzzOneInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
