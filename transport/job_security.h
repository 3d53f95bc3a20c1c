#ifndef ACTEX_TRANSPORT_JOB_SECURITY_H_
#define ACTEX_TRANSPORT_JOB_SECURITY_H_

#include <array>
#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <zmq.hpp>

#include "transport/actor.h"
#include "transport/zap_authenticator.h"

namespace actex {

// Who may join a job: every host holds the same job key file, a secret of 32 random
// bytes, and every tcp socket of the job runs ZeroMQ's CURVE mechanism (RFC 26:
// Curve25519 key agreement, then every frame encrypted and authenticated) with keys
// derived from that secret. A process without the secret cannot complete a
// handshake, so it can neither join, nor get a message accepted, nor read the
// traffic. PROTOCOL.md section 10 describes the derivation and which sockets are
// servers and which clients.
//
// From the secret S two CURVE key pairs are derived, each secret key being
// BLAKE2b-256 keyed with S over a fixed label (crypto_generichash) and each public
// key its Curve25519 base point multiple (crypto_scalarmult_base): the server pair
// (every bound tcp socket) and the client pair (every connecting tcp socket). The
// authenticator (ZAP, RFC 27) accepts only CURVE clients presenting the client
// public key, so even a peer that learned the server's public key cannot connect.
//
// Immutable once made; share it through std::shared_ptr<const JobSecurity>. The
// secrets are wiped from memory when it is destroyed.
class JobSecurity {
 public:
  static constexpr size_t kSecretBytes = 32;
  // The ZAP domain every server socket announces (RFC 27).
  static constexpr const char* kZapDomain = "actex-job";

  // Reads a job key file: one line of 64 hexadecimal digits (surrounding
  // whitespace ignored). Refuses, with a message naming the file: a file that
  // cannot be read (strerror), is not a regular file, is readable or writable by
  // every user ("chmod 600 FILE"), is empty, holds anything but 64 hex digits, or
  // holds an all-zero key. A file readable by its group is accepted with a warning.
  static std::expected<std::shared_ptr<const JobSecurity>, std::string> FromKeyFile(
      const std::string& path);
  // The same from the secret itself (`source` names it in messages); it must be
  // kSecretBytes long and not all zero.
  static std::expected<std::shared_ptr<const JobSecurity>, std::string> FromSecret(
      std::span<const uint8_t> secret, const std::string& source);
  // Writes a new job key (from the system's secure random source) to `path` with
  // mode 0600. Refuses to replace an existing file: changing a job's key must be
  // deliberate.
  static std::expected<void, std::string> WriteNewKeyFile(const std::string& path);

  JobSecurity(const JobSecurity&) = delete;
  JobSecurity& operator=(const JobSecurity&) = delete;
  ~JobSecurity();

  // 16 hex digits that name the key in logs without revealing it (a hash of the
  // secret under its own label), so hosts' logs show whether they hold one key.
  const std::string& key_id() const { return key_id_; }
  const std::string& source() const { return source_; }  // the key file

  // Makes `socket` a CURVE server with the job's server key. Call before bind.
  std::expected<void, std::string> ApplyServer(zmq::socket_t& socket) const;
  // Makes `socket` a CURVE client of the job's servers with the job's client key.
  // Call before connect.
  std::expected<void, std::string> ApplyClient(zmq::socket_t& socket) const;

  // Starts the authenticator of `context` (an actor named "authenticator", bound at
  // inproc://zeromq.zap.01, where libzmq asks every CURVE server socket of the
  // context about each peer's handshake). It accepts CURVE peers presenting the
  // job's client public key and refuses everything else, logging refusals (the
  // first ten, then every thousandth) and counting both in counters(). Start it
  // before binding the context's first server socket. One per context: a second
  // fails with "authenticator: ... Address already in use".
  std::expected<std::unique_ptr<Actor>, std::string> StartAuthenticator(
      zmq::context_t& context) const;
  // Shared by every authenticator this JobSecurity started.
  JobSecurityCounters& counters() const { return *counters_; }

  // The server's public key, for tests that play a peer which learned it.
  std::span<const uint8_t> server_public_key() const { return server_public_; }
  std::span<const uint8_t> client_public_key() const { return client_public_; }

 private:
  using Key = std::array<uint8_t, 32>;
  JobSecurity() = default;

  std::string source_;
  std::string key_id_;
  Key server_secret_{}, server_public_{};
  Key client_secret_{}, client_public_{};
  std::shared_ptr<JobSecurityCounters> counters_ = std::make_shared<JobSecurityCounters>();
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_JOB_SECURITY_H_
