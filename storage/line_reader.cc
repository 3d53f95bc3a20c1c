#include "storage/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "storage/file_io.h"

namespace actex {

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;
// A line buffer grown past this by one long line is released once that line is
// done, so a single outlier does not pin its size for the rest of the run.
constexpr size_t kKeptLineCapacity = size_t{16} << 20;

gzFile AsGz(void* handle) { return static_cast<gzFile>(handle); }

}  // namespace

std::expected<std::unique_ptr<LineReader>, std::string> LineReader::Open(const std::string& path,
                                                                         int64_t max_line_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(OsError("cannot open input", path, errno));
  ScopedFd guard(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::unexpected(OsError("cannot stat input", path, errno));
  if (S_ISDIR(info.st_mode)) return std::unexpected("input " + path + " is a directory");
  // gzdopen reads plain files transparently and recognizes gzip by its magic bytes.
  gzFile gz = ::gzdopen(fd, "rb");
  if (gz == nullptr) return std::unexpected(OsError("cannot open input", path, ENOMEM));
  guard.Release();  // gzclose closes the descriptor
  ::gzbuffer(gz, static_cast<unsigned>(kChunkBytes));
  std::unique_ptr<LineReader> reader(new LineReader());
  reader->path_ = path;
  reader->max_line_bytes_ = max_line_bytes;
  reader->gz_ = gz;
  reader->chunk_.resize(kChunkBytes);
  return reader;
}

LineReader::~LineReader() {
  if (gz_ != nullptr) ::gzclose(AsGz(gz_));
}

std::expected<bool, std::string> LineReader::Refill() {
  const std::string where = path_ + " at line " + std::to_string(lines_ + 1);
  int n = ::gzread(AsGz(gz_), chunk_.data(), static_cast<unsigned>(chunk_.size()));
  int error = Z_OK;
  const char* message = ::gzerror(AsGz(gz_), &error);
  if (n < 0 || (error != Z_OK && error != Z_BUF_ERROR)) {
    if (error == Z_ERRNO) return std::unexpected(OsError("cannot read", where, errno));
    return std::unexpected("cannot read " + where + ": corrupt gzip data (" + message + ")");
  }
  if (n == 0) {
    // Z_BUF_ERROR at the end means the input stopped inside a gzip stream.
    if (error == Z_BUF_ERROR) {
      return std::unexpected("cannot read " + where + ": gzip stream ends early (truncated file)");
    }
    return false;
  }
  chunk_begin_ = 0;
  chunk_end_ = static_cast<size_t>(n);
  return true;
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
