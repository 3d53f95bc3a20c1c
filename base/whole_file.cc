#include "base/whole_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/regular_file.h"

namespace actex {
namespace {

// "1 GiB", "64 KiB" or "123 bytes": the bound as a user would write it.
std::string BytesText(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0) {
    return std::to_string(bytes >> 30) + " GiB";
  }
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string TooLarge(const std::string& path, int64_t bytes, int64_t max_bytes) {
  return path + " is " + std::to_string(bytes) + " bytes, more than the " + BytesText(max_bytes) +
         " actex reads of such a file; is it the right file?";
}

}  // namespace

std::expected<std::string, std::string> ReadWholeFile(const std::string& path, int64_t max_bytes) {
  auto file = OpenRegularFile(path);
  if (!file) return std::unexpected(file.error());
  if (file->bytes() > max_bytes) return std::unexpected(TooLarge(path, file->bytes(), max_bytes));
  std::string bytes;
  bytes.reserve(static_cast<size_t>(file->bytes()));
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(file->fd(), buffer, sizeof(buffer));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::unexpected("cannot read " + path + ": " + std::strerror(errno));
    }
    bytes.append(buffer, static_cast<size_t>(got));
    // A file that grows while it is read is bounded all the same.
    if (static_cast<int64_t>(bytes.size()) > max_bytes) {
      return std::unexpected(TooLarge(path, static_cast<int64_t>(bytes.size()), max_bytes));
    }
  }
  return bytes;
}

}  // namespace actex
