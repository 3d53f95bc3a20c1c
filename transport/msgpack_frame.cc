#include "transport/msgpack_frame.h"

#include <spdlog/fmt/fmt.h>

#include <new>

namespace actex {
namespace {

// A first pass over untrusted msgpack that allocates nothing: it proves the bytes
// hold exactly one complete object within the depth and object limits before the
// real decoder allocates msgpack::object arrays sized by the headers it reads. A
// header claiming 2^32 elements in a 10-byte body fails here, not in malloc.
struct BoundedVisitor : msgpack::null_visitor {
  size_t depth = 0;
  size_t objects = 0;
  std::string refusal;

  bool Count() {
    if (++objects <= kMaxMsgpackObjects) return true;
    refusal = fmt::format("more than {} msgpack objects", kMaxMsgpackObjects);
    return false;
  }
  bool Open() {
    if (!Count()) return false;
    if (++depth <= kMaxMsgpackDepth) return true;
    refusal = fmt::format("msgpack nested deeper than {}", kMaxMsgpackDepth);
    return false;
  }
  bool visit_nil() { return Count(); }
  bool visit_boolean(bool) { return Count(); }
  bool visit_positive_integer(uint64_t) { return Count(); }
  bool visit_negative_integer(int64_t) { return Count(); }
  bool visit_float32(float) { return Count(); }
  bool visit_float64(double) { return Count(); }
  bool visit_str(const char*, uint32_t) { return Count(); }
  bool visit_bin(const char*, uint32_t) { return Count(); }
  bool visit_ext(const char*, uint32_t) { return Count(); }
  bool start_array(uint32_t) { return Open(); }
  bool end_array() {
    --depth;
    return true;
  }
  bool start_map(uint32_t) { return Open(); }
  bool end_map() {
    --depth;
    return true;
  }
  void parse_error(size_t, size_t error_offset) {
    refusal = fmt::format("invalid msgpack at byte {}", error_offset);
  }
  void insufficient_bytes(size_t, size_t) { refusal = "truncated msgpack"; }
};

}  // namespace

std::expected<msgpack::object_handle, std::string> DecodeMsgpackFrame(const zmq::message_t& frame,
                                                                      std::string_view what,
                                                                      size_t max_bytes) {
  const size_t size = frame.size();
  if (size == 0) return std::unexpected(fmt::format("{} frame is empty", what));
  if (size > max_bytes) {
    return std::unexpected(
        fmt::format("{} frame has {} bytes, more than the limit of {}", what, size, max_bytes));
  }
  const char* data = static_cast<const char*>(frame.data());
  BoundedVisitor visitor;
  size_t offset = 0;
  bool parsed = false;
  try {
    parsed = msgpack::parse(data, size, offset, visitor);
  } catch (const msgpack::unpack_error& e) {
    return std::unexpected(fmt::format("{} frame is not msgpack: {}", what, e.what()));
  }
  if (!parsed) {
    return std::unexpected(fmt::format("{} frame is not msgpack: {}", what,
                                       visitor.refusal.empty() ? "invalid" : visitor.refusal));
  }
  if (offset != size) {
    return std::unexpected(
        fmt::format("{} frame has {} bytes after its msgpack object", what, size - offset));
  }
  // Every object takes at least one byte, so the frame size bounds every count.
  const msgpack::unpack_limit limit(size, size, size, size, size, kMaxMsgpackDepth);
  try {
    return msgpack::unpack(data, size, nullptr, nullptr, limit);
  } catch (const msgpack::unpack_error& e) {
    return std::unexpected(fmt::format("{} frame is not msgpack: {}", what, e.what()));
  } catch (const std::bad_alloc&) {
    return std::unexpected(fmt::format("{} frame: out of memory decoding {} bytes", what, size));
  }
}

}  // namespace actex
