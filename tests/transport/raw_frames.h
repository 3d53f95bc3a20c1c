#ifndef ACTEX_TESTS_TRANSPORT_RAW_FRAMES_H_
#define ACTEX_TESTS_TRANSPORT_RAW_FRAMES_H_

// Messages built frame by frame, for tests that send what Send never would: another
// schema version, an unknown type, a body of the wrong shape, a frame too many. The
// envelope itself is transport/wire.h's PackEnvelope.

#include <msgpack.hpp>
#include <string>
#include <vector>
#include <zmq.hpp>

namespace actex::test_support {

// `value` packed as one msgpack object: a message body, or anything in its place.
template <typename T>
std::string PackedBody(const T& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  return std::string(buffer.data(), buffer.size());
}

// Sends `frames` as one multipart message, exactly as given.
inline void SendFrames(zmq::socket_t& socket, const std::vector<std::string>& frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i]),
                i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_TRANSPORT_RAW_FRAMES_H_
