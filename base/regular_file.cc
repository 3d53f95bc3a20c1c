#include "base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace actex {
namespace {

// The target a symbolic link names, as written in the link; empty if `path` is not one.
std::string LinkTarget(const std::string& path) {
  std::string target(4096, '\0');
  const ssize_t length = ::readlink(path.c_str(), target.data(), target.size());
  if (length < 0) return "";
  target.resize(static_cast<size_t>(length));
  return target;
}

}  // namespace

std::string DescribeFileType(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string DescribeOpenError(const std::string& path, int error) {
  if (error == ENOENT || error == ELOOP) {
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      const std::string target = LinkTarget(path);
      if (error == ELOOP) {
        return path + " is a symbolic link to " + target +
               " that loops (it leads back to itself); point it at the file";
      }
      return path + " is a symbolic link to " + target +
             ", which does not exist; point it at the file or copy the file there";
    }
  }
  return "cannot open " + path + ": " + std::strerror(error);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(other.Release()), bytes_(other.bytes_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    bytes_ = other.bytes_;
    fd_ = other.Release();
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

int RegularFile::Release() { return std::exchange(fd_, -1); }

std::expected<RegularFile, std::string> OpenRegularFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::unexpected(DescribeOpenError(path, errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    return std::unexpected("cannot stat " + path + ": " + std::strerror(saved));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return std::unexpected(path + " is " + DescribeFileType(info.st_mode) + ", not a regular file");
  }
  // Reads of a regular file never block; clear the flag so later readers see the
  // ordinary blocking descriptor they expect.
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) {
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  return RegularFile(fd, static_cast<int64_t>(info.st_size));
}

std::expected<bool, std::string> PathEntryExists(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return std::unexpected("cannot stat " + path + ": " + std::strerror(errno));
  }
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return std::unexpected(DescribeOpenError(path, errno));
  return true;
}

}  // namespace actex
