#include "storage/shard_file_sink.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "storage/crc32.h"

namespace actex {

namespace {

// Activations are close to incompressible noise in their low mantissa bits; level 1
// gets most of what gzip can save on them (mostly exponent and id bytes) at a few
// times the speed of level 6, so the writer does not slow the forward pass down.
constexpr int kGzipLevel = 1;
// zlib's windowBits 15 plus 16 selects the gzip wrapper instead of zlib's.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemoryLevel = 8;
constexpr size_t kCompressedBufferBytes = size_t{1} << 18;

}  // namespace

struct ShardFileSink::GzipStream {
  z_stream stream{};
  bool initialized = false;
  ~GzipStream() {
    if (initialized) deflateEnd(&stream);
  }
};

std::expected<std::unique_ptr<ShardFileSink>, std::string> ShardFileSink::Create(
    const std::string& path, bool gzip, WriteBudget* budget) {
  std::unique_ptr<ShardFileSink> sink(new ShardFileSink());
  sink->path_ = path;
  sink->budget_ = budget;
  auto fd = CreateFileForWrite(path);
  if (!fd) return std::unexpected(fd.error());
  sink->fd_ = std::move(*fd);
  if (gzip) {
    sink->gzip_ = std::make_unique<GzipStream>();
    if (deflateInit2(&sink->gzip_->stream, kGzipLevel, Z_DEFLATED, kGzipWindowBits, kMemoryLevel,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      return std::unexpected("cannot start gzip stream for " + path + ": out of memory");
    }
    sink->gzip_->initialized = true;
    sink->compressed_.resize(kCompressedBufferBytes);
  }
  return sink;
}

ShardFileSink::~ShardFileSink() = default;

std::expected<void, std::string> ShardFileSink::WriteToFile(const uint8_t* data, size_t size) {
  if (auto written = WriteAll(fd_.get(), data, size, path_, budget_); !written) return written;
  crc32_ = Crc32Update(crc32_, data, size);
  bytes_written_ += static_cast<int64_t>(size);
  return {};
}

std::expected<void, std::string> ShardFileSink::Deflate(int flush) {
  z_stream& stream = gzip_->stream;
  while (true) {
    stream.next_out = compressed_.data();
    stream.avail_out = static_cast<uInt>(compressed_.size());
    const int status = deflate(&stream, flush);
    if (status == Z_STREAM_ERROR) {
      return std::unexpected("gzip compression failed for " + path_);
    }
    const size_t produced = compressed_.size() - stream.avail_out;
    if (auto written = WriteToFile(compressed_.data(), produced); !written) return written;
    if (flush == Z_FINISH ? status == Z_STREAM_END
                          : (stream.avail_in == 0 && stream.avail_out != 0)) {
      return {};
    }
  }
}

std::expected<void, std::string> ShardFileSink::Write(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (!gzip_) return WriteToFile(bytes, size);
  for (size_t done = 0; done < size;) {
    const size_t piece = std::min<size_t>(size - done, std::numeric_limits<uInt>::max());
    gzip_->stream.next_in = const_cast<Bytef*>(bytes + done);
    gzip_->stream.avail_in = static_cast<uInt>(piece);
    if (auto deflated = Deflate(Z_NO_FLUSH); !deflated) return deflated;
    done += piece;
  }
  return {};
}

std::expected<bool, std::string> ShardFileSink::CopyFileIn(int from, const std::string& from_path,
                                                           int64_t bytes, uint32_t crc) {
  if (gzip_ || (budget_ != nullptr && budget_->remaining >= 0)) return false;
  auto copied = CopyFileRange(from, from_path, fd_.get(), path_, bytes);
  if (!copied || !*copied) return copied;
  crc32_ = Crc32Combine(crc32_, crc, bytes);
  bytes_written_ += bytes;
  return true;
}

std::expected<void, std::string> ShardFileSink::Finish() {
  if (gzip_) {
    gzip_->stream.next_in = nullptr;
    gzip_->stream.avail_in = 0;
    if (auto finished = Deflate(Z_FINISH); !finished) return finished;
  }
  if (auto synced = SyncFile(fd_.get(), path_); !synced) return synced;
  return fd_.Close(path_);
}

}  // namespace actex
