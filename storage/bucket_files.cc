#include "storage/bucket_files.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace actex {

size_t BucketFiles::MaxOpen() {
  constexpr size_t kMostOpen = 256;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return kMostOpen;
  }
  // The rest of the limit is for the source shards, the output files, ZeroMQ...
  return std::clamp<size_t>(static_cast<size_t>(limit.rlim_cur / 4), 4, kMostOpen);
}

BucketFiles::BucketFiles(std::function<std::string(int)> path, size_t buckets)
    : path_(std::move(path)), max_open_(MaxOpen()), files_(buckets), where_(buckets) {}

std::expected<BucketFiles, std::string> BucketFiles::Prepare(std::function<std::string(int)> path,
                                                             const std::vector<int64_t>& bytes) {
  BucketFiles files(std::move(path), bytes.size());
  for (size_t b = 0; b < bytes.size(); ++b) {
    const std::string name = files.path_(static_cast<int>(b));
    ScopedFd fd(::open(name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0) return std::unexpected(OsError("cannot open", name, errno));
    if (::ftruncate(fd.get(), bytes[b]) != 0) {
      return std::unexpected(OsError("cannot truncate", name, errno));
    }
    if (auto closed = fd.Close(name); !closed) return std::unexpected(closed.error());
  }
  return files;
}

std::expected<int, std::string> BucketFiles::Fd(int b) {
  if (files_[b].get() >= 0) {
    recent_.splice(recent_.begin(), recent_, where_[b]);
    return files_[b].get();
  }
  if (recent_.size() >= max_open_) {
    // Closed without a sync: SyncWritten opens it again for that.
    const int oldest = recent_.back();
    recent_.pop_back();
    if (auto closed = files_[oldest].Close(path_(oldest)); !closed) {
      return std::unexpected(closed.error());
    }
  }
  const std::string name = path_(b);
  ScopedFd fd(::open(name.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (fd.get() < 0) return std::unexpected(OsError("cannot open", name, errno));
  files_[b] = std::move(fd);
  recent_.push_front(b);
  where_[b] = recent_.begin();
  return files_[b].get();
}

std::expected<void, std::string> BucketFiles::Append(int b, const uint8_t* data, size_t size,
                                                     WriteBudget* budget) {
  if (size == 0) return {};
  auto fd = Fd(b);
  if (!fd) return std::unexpected(fd.error());
  unsynced_.insert(b);
  if (auto wrote = WriteAll(*fd, data, size, path_(b), budget); !wrote) return wrote;
  StartWriteback(*fd);
  return {};
}

std::expected<void, std::string> BucketFiles::SyncWritten() {
  for (const int b : unsynced_) {
    const std::string name = path_(b);
    if (files_[b].get() >= 0) {
      if (auto synced = SyncFile(files_[b].get(), name); !synced) return synced;
      continue;
    }
    // fsync of any descriptor of the file writes all its dirty pages.
    ScopedFd fd(::open(name.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) return std::unexpected(OsError("cannot open", name, errno));
    if (auto synced = SyncFile(fd.get(), name); !synced) return synced;
    if (auto closed = fd.Close(name); !closed) return closed;
  }
  unsynced_.clear();
  return {};
}

}  // namespace actex
