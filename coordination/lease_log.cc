#include "coordination/lease_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include "base/whole_file.h"
#include "storage/file_io.h"

namespace actex {

namespace {

std::string Header(int64_t chunk_docs) {
  return "actex-leases 1 chunk_docs " + std::to_string(chunk_docs);
}

// Appends `text` and syncs it; on failure cuts the file back to where it was, so the
// log never holds part of a record.
std::expected<void, std::string> AppendDurably(int fd, const std::string& text,
                                               const std::string& path) {
  struct stat before {};
  if (::fstat(fd, &before) != 0) return std::unexpected(OsError("cannot stat", path, errno));
  auto written = WriteAll(fd, text.data(), text.size(), path, nullptr);
  if (written) written = SyncFile(fd, path);
  if (!written) (void)::ftruncate(fd, before.st_size);
  return written;
}

}  // namespace

std::expected<int64_t, std::string> ParseChunkNumber(std::string_view text) {
  int64_t chunk = -1;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, chunk);
  if (error != std::errc() || stop != end || chunk < 0) {
    return std::unexpected("\"" + std::string(text) + "\" is not a chunk number");
  }
  return chunk;
}

std::expected<LeaseTable::Record, std::string> ParseRecord(const std::string& line) {
  std::istringstream words(line);
  std::vector<std::string> parts;
  for (std::string word; words >> word;) parts.push_back(word);
  using Kind = LeaseTable::Record::Kind;
  LeaseTable::Record record;
  const std::map<std::string, Kind> with_chunk = {
      {"granted", Kind::kGranted}, {"listing", Kind::kListing}, {"listed", Kind::kListed}};
  const std::map<std::string, Kind> without_chunk = {{"lost", Kind::kLost},
                                                     {"released", Kind::kReleased}};
  if (parts.size() == 3 && with_chunk.contains(parts[0])) {
    record.kind = with_chunk.at(parts[0]);
    record.holder = parts[2];
  } else if (parts.size() == 2 && without_chunk.contains(parts[0])) {
    record.kind = without_chunk.at(parts[0]);
    record.holder = parts[1];
    return record;
  } else if (parts.size() == 2 && parts[0] == "ended") {
    record.kind = Kind::kEnded;
  } else {
    return std::unexpected("\"" + line + "\" is not a lease record");
  }
  auto chunk = ParseChunkNumber(parts[1]);
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
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(OsError("cannot open the lease log", path, errno));
  log->fd_ = ScopedFd(fd);
  // That record never took effect: a change is acted on only once its line is on disk.
  if (auto dropped = DropTornLastLine(fd, path); !dropped) return std::unexpected(dropped.error());
  auto text = ReadWholeFile(path);
  if (!text) return std::unexpected(text.error());
  if (text->empty()) {
    if (auto written = AppendDurably(fd, Header(chunk_docs) + "\n", path); !written) {
      return std::unexpected(written.error());
    }
    if (!existed) {  // the new file's name must survive a crash too
      if (auto synced = SyncParentDirectory(path); !synced) return std::unexpected(synced.error());
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
    log->lines_.push_back(line);
  }
  return log;
}

std::expected<void, std::string> LeaseLog::Append(const LeaseTable::Record& record) {
  if (auto fits = table_->Check(record); !fits) return fits;
  if (auto written = AppendDurably(fd_.get(), DescribeRecord(record) + "\n", path_); !written) {
    return written;
  }
  lines_.push_back(DescribeRecord(record));
  return table_->Apply(record);
}

std::expected<void, std::string> LeaseLog::AppendAll(
    const std::vector<LeaseTable::Record>& records) {
  LeaseTable after = *table_;
  std::string text;
  for (const LeaseTable::Record& record : records) {
    if (auto applied = after.Apply(record); !applied) return applied;
    text += DescribeRecord(record) + "\n";
  }
  if (auto written = AppendDurably(fd_.get(), text, path_); !written) return written;
  *table_ = std::move(after);
  for (const LeaseTable::Record& record : records) lines_.push_back(DescribeRecord(record));
  return {};
}

}  // namespace actex
