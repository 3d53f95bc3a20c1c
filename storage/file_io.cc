#include "storage/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace actex {

std::string OsError(const std::string& what, const std::string& path, int error) {
  return what + " " + path + ": " + std::strerror(error);
}

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

ScopedFd::~ScopedFd() {
  // Only reached on paths that already failed or that never wrote: the error that
  // matters has been reported, so a close error here adds nothing.
  if (fd_ >= 0) ::close(fd_);
}

int ScopedFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

std::expected<void, std::string> ScopedFd::Close(const std::string& path) {
  int fd = Release();
  if (fd >= 0 && ::close(fd) != 0) return std::unexpected(OsError("cannot close", path, errno));
  return {};
}

std::expected<ScopedFd, std::string> CreateFileForWrite(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(OsError("cannot create", path, errno));
  return ScopedFd(fd);
}

std::expected<bool, std::string> CopyFileRange(int from, const std::string& from_path, int to,
                                               const std::string& to_path, int64_t bytes) {
  loff_t offset = 0;
  while (offset < bytes) {
    const ssize_t copied =
        ::copy_file_range(from, &offset, to, nullptr, static_cast<size_t>(bytes - offset), 0);
    if (copied > 0) continue;  // copy_file_range moved `offset` on
    if (copied < 0 && errno == EINTR) continue;
    const int error = copied == 0 ? ENODATA : errno;
    const bool unsupported =
        error == EXDEV || error == EINVAL || error == ENOSYS || error == EOPNOTSUPP;
    if (offset == 0 && unsupported) return false;
    return std::unexpected(OsError("cannot copy " + from_path + " into", to_path, error));
  }
  return true;
}

void StartWriteback(int fd) {
  // Advisory: a failure only means the later fsync does all the waiting.
  (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

std::expected<void, std::string> WriteAll(int fd, const void* data, size_t size,
                                          const std::string& path, WriteBudget* budget) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  size_t allowed = size;
  bool over_budget = false;
  if (budget != nullptr && budget->remaining >= 0 &&
      static_cast<uint64_t>(budget->remaining) < size) {
    allowed = static_cast<size_t>(budget->remaining);
    over_budget = true;
  }
  size_t done = 0;
  while (done < allowed) {
    ssize_t n = ::write(fd, bytes + done, allowed - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(OsError("cannot write", path, errno));
    }
    if (n == 0) return std::unexpected(OsError("cannot write", path, ENOSPC));
    done += static_cast<size_t>(n);
  }
  if (budget != nullptr && budget->remaining >= 0) {
    budget->remaining -= static_cast<int64_t>(done);
  }
  if (over_budget) return std::unexpected(OsError("cannot write", path, ENOSPC));
  return {};
}

std::expected<void, std::string> PreadAll(int fd, void* data, size_t size, int64_t offset,
                                          const std::string& path) {
  auto* bytes = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, bytes + done, size - done, offset + static_cast<int64_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(OsError("cannot read", path, errno));
    }
    if (n == 0) return std::unexpected("cannot read " + path + ": unexpected end of file");
    done += static_cast<size_t>(n);
  }
  return {};
}

std::expected<void, std::string> SyncFile(int fd, const std::string& path) {
  if (::fsync(fd) != 0) return std::unexpected(OsError("cannot fsync", path, errno));
  return {};
}

std::expected<void, std::string> SyncParentDirectory(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(OsError("cannot open directory", dir, errno));
  ScopedFd guard(fd);
  if (::fsync(fd) != 0) return std::unexpected(OsError("cannot fsync directory", dir, errno));
  return guard.Close(dir);
}

std::expected<void, std::string> CommitRename(const std::string& tmp_path,
                                              const std::string& path) {
  if (::rename(tmp_path.c_str(), path.c_str()) != 0) {
    return std::unexpected(OsError("cannot rename " + tmp_path + " to", path, errno));
  }
  return SyncParentDirectory(path);
}

std::string AtomicWriteTempPath(const std::string& path) { return path + ".tmp"; }

std::expected<void, std::string> WriteFileAtomically(
    const std::string& path,
    const std::function<std::expected<void, std::string>(int fd, const std::string& tmp_path)>&
        write) {
  const std::string tmp_path = AtomicWriteTempPath(path);
  auto result = [&]() -> std::expected<void, std::string> {
    auto fd = CreateFileForWrite(tmp_path);
    if (!fd) return std::unexpected(fd.error());
    if (auto ok = write(fd->get(), tmp_path); !ok) return ok;
    if (auto ok = SyncFile(fd->get(), tmp_path); !ok) return ok;
    if (auto ok = fd->Close(tmp_path); !ok) return ok;
    return CommitRename(tmp_path, path);
  }();
  if (!result) ::unlink(tmp_path.c_str());
  return result;
}

std::expected<void, std::string> WriteFileAtomically(const std::string& path,
                                                     const std::string& contents,
                                                     WriteBudget* budget) {
  return WriteFileAtomically(path, [&](int fd, const std::string& tmp_path) {
    return WriteAll(fd, contents.data(), contents.size(), tmp_path, budget);
  });
}

std::expected<void, std::string> MakeDirectories(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return std::unexpected("cannot create directory " + path + ": " + error.message());
  if (!std::filesystem::is_directory(path, error)) {
    return std::unexpected("cannot create directory " + path + ": a file of that name exists");
  }
  return {};
}

std::expected<void, std::string> DropTornLastLine(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::unexpected(OsError("cannot stat", path, errno));
  constexpr off_t kChunkBytes = 4096;
  char chunk[kChunkBytes];
  off_t end = info.st_size;
  while (end > 0) {
    const off_t begin = std::max<off_t>(end - kChunkBytes, 0);
    const ssize_t got = ::pread(fd, chunk, static_cast<size_t>(end - begin), begin);
    if (got < 0 && errno == EINTR) continue;
    if (got != end - begin) {
      return std::unexpected(got < 0 ? OsError("cannot read", path, errno)
                                     : path + " shrank while it was read");
    }
    const char* newline =
        static_cast<const char*>(::memrchr(chunk, '\n', static_cast<size_t>(got)));
    if (newline != nullptr) {
      end = begin + (newline - chunk) + 1;
      break;
    }
    end = begin;
  }
  if (end == info.st_size) return {};
  if (::ftruncate(fd, end) != 0) return std::unexpected(OsError("cannot truncate", path, errno));
  return SyncFile(fd, path);
}

}  // namespace actex
