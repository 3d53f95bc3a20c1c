#include "storage/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "storage/file_io.h"
#include "storage/gzip_decoder.h"

namespace actex {

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;
// A line buffer grown past this by one long line is released once that line is
// done, so a single outlier does not pin its size for the rest of the run.
constexpr size_t kKeptLineCapacity = size_t{16} << 20;

// Reads up to `size` bytes, retrying EINTR; 0 at the end of the file.
ssize_t ReadSome(int fd, void* data, size_t size) {
  while (true) {
    const ssize_t got = ::read(fd, data, size);
    if (got >= 0 || errno != EINTR) return got;
  }
}

}  // namespace

std::expected<std::unique_ptr<LineReader>, std::string> LineReader::Open(const std::string& path,
                                                                         int64_t max_line_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(OsError("cannot open input", path, errno));
  ScopedFd guard(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::unexpected(OsError("cannot stat input", path, errno));
  if (S_ISDIR(info.st_mode)) return std::unexpected("input " + path + " is a directory");
  // gzip is told by its magic bytes, whatever the file is called.
  uint8_t magic[2] = {};
  const bool gzip = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::unique_ptr<LineReader> reader(new LineReader());
  reader->path_ = path;
  reader->max_line_bytes_ = max_line_bytes;
  reader->fd_ = guard.Release();
  reader->chunk_.resize(kChunkBytes);
  if (gzip) {
    reader->decoder_ = std::make_unique<GzipDecoder>();
    reader->compressed_.resize(kChunkBytes);
  }
  return reader;
}

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::expected<bool, std::string> LineReader::Refill() {
  const std::string where = path_ + " at line " + std::to_string(lines_ + 1);
  chunk_begin_ = chunk_end_ = 0;
  if (decoder_ == nullptr) {
    const ssize_t got = ReadSome(fd_, chunk_.data(), chunk_.size());
    if (got < 0) return std::unexpected(OsError("cannot read", where, errno));
    file_bytes_read_ += got;
    chunk_end_ = static_cast<size_t>(got);
    return got > 0;
  }
  while (true) {
    if (decoder_->NeedsInput()) {
      const ssize_t got = ReadSome(fd_, compressed_.data(), compressed_.size());
      if (got < 0) return std::unexpected(OsError("cannot read", where, errno));
      file_bytes_read_ += got;
      if (got == 0) {
        if (auto finished = decoder_->Finish(); !finished) {
          return std::unexpected("cannot read " + where + ": " + finished.error());
        }
        return false;
      }
      decoder_->SetInput(compressed_.data(), static_cast<size_t>(got));
    }
    const int64_t consumed_before = decoder_->bytes_consumed();
    auto inflated = decoder_->Inflate(reinterpret_cast<uint8_t*>(chunk_.data()), chunk_.size());
    if (!inflated) return std::unexpected("cannot read " + where + ": " + inflated.error());
    if (*inflated > 0) {
      chunk_end_ = *inflated;
      chunk_consumed_begin_ = consumed_before;
      chunk_consumed_end_ = decoder_->bytes_consumed();
      return true;
    }
  }
}

int64_t LineReader::file_bytes_consumed() const {
  if (decoder_ == nullptr) {
    return file_bytes_read_ - static_cast<int64_t>(chunk_end_ - chunk_begin_);
  }
  if (at_end_ || chunk_end_ == 0) return decoder_->bytes_consumed();
  const double into_chunk = static_cast<double>(chunk_begin_) / static_cast<double>(chunk_end_);
  return chunk_consumed_begin_ +
         static_cast<int64_t>(into_chunk *
                              static_cast<double>(chunk_consumed_end_ - chunk_consumed_begin_));
}

void LineReader::Append(std::string_view piece) {
  line_started_ = true;
  line_bytes_ += static_cast<int64_t>(piece.size());
  if (line_bytes_ <= max_line_bytes_) {
    line_.append(piece);
  } else if (!line_.empty()) {
    line_.clear();  // too long: what was kept is dropped, the rest is only counted
  }
}

std::expected<std::optional<LineReader::Line>, std::string> LineReader::Next() {
  if (line_.capacity() > kKeptLineCapacity) line_ = std::string();
  line_.clear();
  line_bytes_ = 0;
  line_started_ = false;
  if (at_end_) return std::nullopt;
  while (true) {
    if (chunk_begin_ == chunk_end_) {
      auto more = Refill();
      if (!more) return std::unexpected(more.error());
      if (!*more) {
        at_end_ = true;
        if (!line_started_) return std::nullopt;
        break;  // the last line had no '\n'
      }
    }
    const char* begin = chunk_.data() + chunk_begin_;
    const size_t available = chunk_end_ - chunk_begin_;
    const void* newline = std::memchr(begin, '\n', available);
    if (newline == nullptr) {
      Append(std::string_view(begin, available));
      chunk_begin_ = chunk_end_;
      continue;
    }
    const size_t length = static_cast<const char*>(newline) - begin;
    Append(std::string_view(begin, length));
    chunk_begin_ += length + 1;
    break;
  }
  ++lines_;
  Line line;
  line.bytes = line_bytes_;
  line.too_long = line_bytes_ > max_line_bytes_;
  if (!line.too_long) {
    line.text = line_;
    if (!line.text.empty() && line.text.back() == '\r') line.text.remove_suffix(1);
  }
  return line;
}

}  // namespace actex
