#ifndef ACTEX_TRANSPORT_MSGPACK_FRAME_H_
#define ACTEX_TRANSPORT_MSGPACK_FRAME_H_

#include <cstddef>
#include <expected>
#include <msgpack.hpp>
#include <string>
#include <string_view>
#include <zmq.hpp>

namespace actex {

// Nesting of msgpack containers (the schema needs 3) and msgpack objects per body:
// both bound the memory a hostile body can make the decoder allocate.
inline constexpr size_t kMaxMsgpackDepth = 16;
inline constexpr size_t kMaxMsgpackObjects = size_t{16} << 20;

// Decodes one frame of untrusted bytes that must hold exactly one msgpack object of
// at most `max_bytes` bytes, nested at most kMaxMsgpackDepth deep and made of at most
// kMaxMsgpackObjects objects. Refuses (never throws) anything else: empty, too large, invalid,
// truncated, trailing bytes. The frame is walked once without allocating before it is decoded, so
// container headers that claim more elements than the frame holds cost nothing. `what` names the
// frame in errors
// ("envelope", "TokenBatch body"). The result owns copies of all strings.
std::expected<msgpack::object_handle, std::string> DecodeMsgpackFrame(const zmq::message_t& frame,
                                                                      std::string_view what,
                                                                      size_t max_bytes);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_MSGPACK_FRAME_H_
