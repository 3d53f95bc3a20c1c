#include "model/tokenizer/file_digest.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace actex {

std::expected<std::string, std::string> ReadTokenizerFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected("cannot open " + path + ": " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    return std::unexpected("cannot stat " + path + ": " + std::strerror(saved));
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    return std::unexpected("cannot read " + path + ": it is a directory");
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      return std::unexpected("cannot read " + path + ": " + std::strerror(saved));
    }
    bytes.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return bytes;
}

std::string Sha256HexOfBytes(std::string_view bytes) {
  // sodium_init is idempotent and thread-safe; it only selects the fastest implementations,
  // and SHA-256 is correct without it, so a failed init needs no handling.
  [[maybe_unused]] const int initialized = sodium_init();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  char hex[crypto_hash_sha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
  return std::string(hex, crypto_hash_sha256_BYTES * 2);
}

}  // namespace actex
