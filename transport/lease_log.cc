#include "transport/lease_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "base/whole_file.h"

namespace actex {

namespace {

std::string Header(int64_t chunk_docs) {
  return "actex-leases 1 chunk_docs " + std::to_string(chunk_docs);
}

std::string OsError(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Writes all of `text` at the end of `fd` and flushes it to the disk.
std::expected<void, std::string> AppendDurably(int fd, const std::string& text,
                                               const std::string& path) {
  for (size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(OsError("cannot append to", path));
    written += static_cast<size_t>(n);
  }
  if (::fdatasync(fd) != 0) return std::unexpected(OsError("cannot flush", path));
  return {};
}

std::expected<int64_t, std::string> ParseChunk(const std::string& text) {
  int64_t chunk = -1;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, chunk);
  if (error != std::errc() || stop != end || chunk < 0) {
    return std::unexpected("\"" + text + "\" is not a chunk number");
  }
  return chunk;
}

}  // namespace

std::expected<LeaseTable::Record, std::string> ParseRecord(const std::string& line) {
  std::istringstream words(line);
  std::vector<std::string> parts;
  for (std::string word; words >> word;) parts.push_back(word);
  using Kind = LeaseTable::Record::Kind;
  LeaseTable::Record record;
  if (parts.size() == 3 && (parts[0] == "granted" || parts[0] == "listed")) {
    record.kind = parts[0] == "granted" ? Kind::kGranted : Kind::kListed;
    record.holder = parts[2];
  } else if (parts.size() == 2 && parts[0] == "released") {
    record.kind = Kind::kReleased;
    record.holder = parts[1];
    return record;
  } else if (parts.size() == 2 && parts[0] == "ended") {
    record.kind = Kind::kEnded;
  } else {
    return std::unexpected("\"" + line + "\" is not a lease record");
  }
  auto chunk = ParseChunk(parts[1]);
  if (!chunk) return std::unexpected(chunk.error());
  record.chunk = *chunk;
  return record;
}

std::expected<std::unique_ptr<LeaseLog>, std::string> LeaseLog::Open(const std::string& path,
                                                                     int64_t chunk_docs,
                                                                     LeaseTable* table) {
  std::unique_ptr<LeaseLog> log(new LeaseLog());
  log->path_ = path;
  log->table_ = table;
  std::error_code error;
  const bool existed = std::filesystem::exists(path, error);
  log->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log->fd_ < 0) return std::unexpected(OsError("cannot open the lease log", path));
  auto text = ReadWholeFile(path);
  if (!text) return std::unexpected(text.error());
  // A crash mid-append leaves a last line without its newline: that record never
  // took effect, since a change is acted on only once its line is on disk.
  const size_t whole = text->rfind('\n') == std::string::npos ? 0 : text->rfind('\n') + 1;
  if (whole < text->size()) {
    if (::ftruncate(log->fd_, static_cast<off_t>(whole)) != 0) {
      return std::unexpected(OsError("cannot cut the torn last line of", path));
    }
    text->resize(whole);
  }
  if (text->empty()) {
    if (auto written = AppendDurably(log->fd_, Header(chunk_docs) + "\n", path); !written) {
      return std::unexpected(written.error());
    }
    if (!existed) {
      // The new file's name must survive a crash too.
      const std::string dir = std::filesystem::path(path).parent_path().string();
      const int dir_fd =
          ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
      }
    }
    return log;
  }
  std::istringstream lines(*text);
  std::string line;
  std::getline(lines, line);
  if (line != Header(chunk_docs)) {
    return std::unexpected(path + " starts \"" + line + "\", not \"" + Header(chunk_docs) +
                           "\": another job's lease log, or one with another --chunk-docs");
  }
  for (int64_t number = 2; std::getline(lines, line); ++number) {
    auto record = ParseRecord(line);
    if (!record) {
      return std::unexpected(path + " line " + std::to_string(number) + ": " + record.error());
    }
    if (auto applied = table->Apply(*record); !applied) {
      return std::unexpected(path + " line " + std::to_string(number) + ": " + applied.error());
    }
    ++log->records_;
  }
  return log;
}

std::expected<void, std::string> LeaseLog::Append(const LeaseTable::Record& record) {
  if (auto fits = table_->Check(record); !fits) return fits;
  struct stat before {};
  if (::fstat(fd_, &before) != 0) return std::unexpected(OsError("cannot stat", path_));
  if (auto written = AppendDurably(fd_, DescribeRecord(record) + "\n", path_); !written) {
    // Leave no partial record behind: a replay must see the table as it is.
    (void)::ftruncate(fd_, before.st_size);
    return written;
  }
  ++records_;
  return table_->Apply(record);
}

LeaseLog::~LeaseLog() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace actex
