#include "storage/gzip_decoder.h"

#include <zlib.h>

namespace actex {
namespace {

// zlib's windowBits: 15 plus 16 accepts the gzip wrapper only.
constexpr int kGzipWindowBits = 15 + 16;

}  // namespace

struct GzipDecoder::Stream {
  z_stream z{};
  bool initialized = false;
  bool member_ended = false;  // the last member ended cleanly and no byte followed yet
  int members_ended = 0;
  int64_t bytes_given = 0;  // over every SetInput
  std::string error;        // sticky: after an error the rest is not looked at
};

GzipDecoder::GzipDecoder() : stream_(std::make_unique<Stream>()) {
  if (inflateInit2(&stream_->z, kGzipWindowBits) != Z_OK) {
    stream_->error = "cannot start a gzip decoder: out of memory";
    return;
  }
  stream_->initialized = true;
}

GzipDecoder::~GzipDecoder() {
  if (stream_->initialized) inflateEnd(&stream_->z);
}

void GzipDecoder::SetInput(const uint8_t* data, size_t size) {
  stream_->z.next_in = const_cast<Bytef*>(data);
  stream_->z.avail_in = static_cast<uInt>(size);
  stream_->bytes_given += static_cast<int64_t>(size);
}

bool GzipDecoder::NeedsInput() const { return stream_->z.avail_in == 0; }

int64_t GzipDecoder::bytes_consumed() const {
  return stream_->bytes_given - static_cast<int64_t>(stream_->z.avail_in);
}

std::expected<size_t, std::string> GzipDecoder::Inflate(uint8_t* output, size_t size) {
  Stream& s = *stream_;
  z_stream& z = s.z;
  size_t written = 0;
  while (s.error.empty() && written < size) {
    if (s.member_ended) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another member follows
      s.member_ended = false;
    }
    z.next_out = output + written;
    z.avail_out = static_cast<uInt>(size - written);
    const int status = inflate(&z, Z_NO_FLUSH);
    written = size - z.avail_out;
    if (status == Z_STREAM_END) {
      s.member_ended = true;
      ++s.members_ended;
      continue;
    }
    if (status == Z_BUF_ERROR || (status == Z_OK && z.avail_in == 0)) break;
    if (status != Z_OK) {
      const std::string message = z.msg != nullptr ? z.msg : "error " + std::to_string(status);
      s.error = s.members_ended > 0
                    ? "bytes after the end of the gzip stream are not gzip data (" + message + ")"
                    : "not valid gzip data: " + message;
    }
  }
  // What was inflated before an error is still delivered; the error comes next call.
  if (!s.error.empty() && written == 0) return std::unexpected(s.error);
  return written;
}

std::expected<void, std::string> GzipDecoder::Finish() const {
  const Stream& s = *stream_;
  if (!s.error.empty()) return std::unexpected(s.error);
  if (s.members_ended == 0 && s.z.total_in == 0) {
    return std::unexpected("empty file, not gzip data");
  }
  if (!s.member_ended) return std::unexpected("gzip stream ends early (truncated file)");
  return {};
}

}  // namespace actex
