#include "transport/job_security.h"

#include <fcntl.h>
#include <sodium.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "transport/zap_authenticator.h"

namespace actex {
namespace {

// Labels of the derived keys. Changing one changes every key derived from a file,
// so a host running another derivation cannot join (it fails the handshake).
constexpr std::string_view kServerLabel = "actex job key v1: CURVE server secret key";
constexpr std::string_view kClientLabel = "actex job key v1: CURVE client secret key";
constexpr std::string_view kIdLabel = "actex job key v1: key id";

// A key file is one line; anything much longer is not one (and is not read whole).
constexpr size_t kMaxKeyFileBytes = 1024;

std::string MakeKeyHint(const std::string& path) {
  return fmt::format("make one with `actex make-job-key {}` and copy it to every host", path);
}

// BLAKE2b-256 keyed with the secret over `label`.
std::array<uint8_t, 32> Derive(std::span<const uint8_t> secret, std::string_view label) {
  std::array<uint8_t, 32> out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(label.data()),
                     label.size(), secret.data(), secret.size());
  return out;
}

std::string Hex(std::span<const uint8_t> bytes) {
  std::string hex(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), bytes.data(), bytes.size());
  hex.pop_back();
  return hex;
}

std::string ErrnoText(int error) { return std::strerror(error); }

// Closes a file descriptor and wipes a buffer on every way out.
struct KeyFileReader {
  int fd = -1;
  char buffer[kMaxKeyFileBytes + 1] = {};
  ~KeyFileReader() {
    if (fd >= 0) ::close(fd);
    sodium_memzero(buffer, sizeof(buffer));
  }
};

// Checks who may read the file. Others: refused. The group: a warning.
std::expected<void, std::string> CheckPermissions(const std::string& path,
                                                  const struct stat& info) {
  if (!S_ISREG(info.st_mode)) {
    return std::unexpected(fmt::format("job key file {} is not a regular file", path));
  }
  const unsigned mode = info.st_mode & 0777;
  if ((mode & (S_IROTH | S_IWOTH)) != 0) {
    return std::unexpected(fmt::format(
        "job key file {} is readable or writable by every user (mode {:04o}): anyone on this "
        "machine could join the job; run `chmod 600 {}`",
        path, mode, path));
  }
  if ((mode & (S_IRGRP | S_IWGRP)) != 0) {
    spdlog::warn(
        "job key file {} is accessible to its group (mode {:04o}): every member of the "
        "group can join the job; `chmod 600 {}` unless that is intended",
        path, mode, path);
  }
  return {};
}

}  // namespace

JobSecurity::~JobSecurity() {
  sodium_memzero(server_secret_.data(), server_secret_.size());
  sodium_memzero(client_secret_.data(), client_secret_.size());
}

std::expected<std::shared_ptr<const JobSecurity>, std::string> JobSecurity::FromSecret(
    std::span<const uint8_t> secret, const std::string& source) {
  if (sodium_init() < 0) return std::unexpected("cannot initialise libsodium");
  if (zmq_has("curve") == 0) {
    return std::unexpected(fmt::format(
        "job key {}: this libzmq was built without CURVE security, so a job key cannot be used",
        source));
  }
  if (secret.size() != kSecretBytes) {
    return std::unexpected(
        fmt::format("job key {}: {} bytes, expected {}", source, secret.size(), kSecretBytes));
  }
  if (sodium_is_zero(secret.data(), secret.size()) != 0) {
    return std::unexpected(fmt::format("job key {} is all zeros, which is no secret; {}", source,
                                       MakeKeyHint(source)));
  }
  std::shared_ptr<JobSecurity> security(new JobSecurity());
  security->source_ = source;
  security->server_secret_ = Derive(secret, kServerLabel);
  security->client_secret_ = Derive(secret, kClientLabel);
  if (crypto_scalarmult_base(security->server_public_.data(), security->server_secret_.data()) !=
          0 ||
      crypto_scalarmult_base(security->client_public_.data(), security->client_secret_.data()) !=
          0) {
    return std::unexpected(fmt::format("job key {}: cannot derive its CURVE keys", source));
  }
  const std::array<uint8_t, 32> id = Derive(secret, kIdLabel);
  security->key_id_ = Hex(std::span(id).first(8));
  return std::shared_ptr<const JobSecurity>(std::move(security));
}

std::expected<std::shared_ptr<const JobSecurity>, std::string> JobSecurity::FromKeyFile(
    const std::string& path) {
  KeyFileReader reader;
  reader.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (reader.fd < 0) {
    return std::unexpected(fmt::format("cannot read job key file {}: {}", path, ErrnoText(errno)));
  }
  struct stat info {};
  if (::fstat(reader.fd, &info) != 0) {
    return std::unexpected(fmt::format("cannot read job key file {}: {}", path, ErrnoText(errno)));
  }
  if (auto allowed = CheckPermissions(path, info); !allowed) {
    return std::unexpected(allowed.error());
  }
  size_t length = 0;
  while (length < sizeof(reader.buffer)) {
    const ssize_t got = ::read(reader.fd, reader.buffer + length, sizeof(reader.buffer) - length);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return std::unexpected(
          fmt::format("cannot read job key file {}: {}", path, ErrnoText(errno)));
    }
    if (got == 0) break;
    length += static_cast<size_t>(got);
  }
  std::string_view text(reader.buffer, length);
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  const std::string expected =
      fmt::format("a job key is {} hexadecimal digits ({} random bytes) on one line; {}",
                  kSecretBytes * 2, kSecretBytes, MakeKeyHint(path));
  if (text.empty()) {
    return std::unexpected(fmt::format("job key file {} is empty: {}", path, expected));
  }
  if (length > kMaxKeyFileBytes || text.size() != kSecretBytes * 2) {
    return std::unexpected(fmt::format(
        "job key file {} holds {} characters: {}", path,
        length > kMaxKeyFileBytes ? "too many" : std::to_string(text.size()), expected));
  }
  const auto not_hex = std::find_if_not(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
  if (not_hex != text.end()) {
    return std::unexpected(
        fmt::format("job key file {}: character {} is not a hexadecimal digit: {}", path,
                    not_hex - text.begin() + 1, expected));
  }
  std::array<uint8_t, kSecretBytes> secret{};
  size_t decoded = 0;
  const int status = sodium_hex2bin(secret.data(), secret.size(), text.data(), text.size(), nullptr,
                                    &decoded, nullptr);
  std::expected<std::shared_ptr<const JobSecurity>, std::string> security =
      std::unexpected(fmt::format("job key file {}: {}", path, expected));
  if (status == 0 && decoded == kSecretBytes) security = FromSecret(secret, path);
  sodium_memzero(secret.data(), secret.size());
  return security;
}

std::expected<void, std::string> JobSecurity::WriteNewKeyFile(const std::string& path) {
  if (sodium_init() < 0) return std::unexpected("cannot initialise libsodium");
  // O_EXCL: never replace a key, and never follow a link planted at the path.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      return std::unexpected(fmt::format(
          "{} already exists; a job key is never replaced (every host of a job must hold the "
          "same one): remove it first or choose another name",
          path));
    }
    return std::unexpected(
        fmt::format("cannot create job key file {}: {}", path, ErrnoText(errno)));
  }
  std::array<uint8_t, kSecretBytes> secret{};
  randombytes_buf(secret.data(), secret.size());
  std::string line = Hex(secret) + "\n";
  sodium_memzero(secret.data(), secret.size());
  std::string error;
  // The umask may have removed bits but never adds any; fchmod makes 0600 exact.
  if (::fchmod(fd, 0600) != 0) error = ErrnoText(errno);
  size_t written = 0;
  while (error.empty() && written < line.size()) {
    const ssize_t put = ::write(fd, line.data() + written, line.size() - written);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) {
      error = ErrnoText(errno);
      break;
    }
    written += static_cast<size_t>(put);
  }
  if (error.empty() && ::fsync(fd) != 0) error = ErrnoText(errno);
  if (::close(fd) != 0 && error.empty()) error = ErrnoText(errno);
  sodium_memzero(line.data(), line.size());
  if (!error.empty()) {
    ::unlink(path.c_str());
    return std::unexpected(fmt::format("cannot write job key file {}: {}", path, error));
  }
  return {};
}

std::expected<void, std::string> JobSecurity::ApplyServer(zmq::socket_t& socket) const {
  try {
    socket.set(zmq::sockopt::curve_server, true);
    socket.set(zmq::sockopt::curve_secretkey,
               zmq::const_buffer(server_secret_.data(), server_secret_.size()));
    socket.set(zmq::sockopt::zap_domain, kZapDomain);
  } catch (const zmq::error_t& e) {
    return std::unexpected(std::string("cannot make the socket a CURVE server: ") + e.what());
  }
  return {};
}

std::expected<void, std::string> JobSecurity::ApplyClient(zmq::socket_t& socket) const {
  try {
    socket.set(zmq::sockopt::curve_serverkey,
               zmq::const_buffer(server_public_.data(), server_public_.size()));
    socket.set(zmq::sockopt::curve_publickey,
               zmq::const_buffer(client_public_.data(), client_public_.size()));
    socket.set(zmq::sockopt::curve_secretkey,
               zmq::const_buffer(client_secret_.data(), client_secret_.size()));
  } catch (const zmq::error_t& e) {
    return std::unexpected(std::string("cannot make the socket a CURVE client: ") + e.what());
  }
  return {};
}

std::expected<std::unique_ptr<Actor>, std::string> JobSecurity::StartAuthenticator(
    zmq::context_t& context) const {
  ZapPolicy policy;
  policy.client_public_key = client_public_;
  policy.domain = kZapDomain;
  policy.counters = counters_;
  return StartZapAuthenticator(context, std::move(policy));
}

}  // namespace actex
