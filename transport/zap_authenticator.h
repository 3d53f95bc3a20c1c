#ifndef ACTEX_TRANSPORT_ZAP_AUTHENTICATOR_H_
#define ACTEX_TRANSPORT_ZAP_AUTHENTICATOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "transport/actor.h"

namespace actex {

// The inproc endpoint libzmq sends ZAP requests to (RFC 27), one per context.
inline constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

// What the authenticator of a process decided, readable from any thread.
struct JobSecurityCounters {
  std::atomic<uint64_t> accepted{0};  // handshakes of peers holding the job key
  std::atomic<uint64_t> refused{0};   // handshakes refused by the authenticator
};

struct ZapPolicy {
  // The only CURVE client public key accepted.
  std::array<uint8_t, 32> client_public_key{};
  // The ZAP domain the server sockets announce; a request for another is refused.
  std::string domain;
  std::shared_ptr<JobSecurityCounters> counters;  // required
};

// Starts an actor named "authenticator" that binds a ROUTER at kZapEndpoint of
// `context` (before Start returns) and answers every ZAP request: "200" for
// mechanism CURVE, `policy.domain` and `policy.client_public_key`, "400" for
// anything else (another mechanism, domain or key), "500" for a request it cannot
// read. Refusals are logged (first ten, then every thousandth) with the peer's
// address and counted; so are acceptances (counted only). It stops when asked.
// Fails when the context already has a ZAP handler ("Address already in use").
std::expected<std::unique_ptr<Actor>, std::string> StartZapAuthenticator(zmq::context_t& context,
                                                                         ZapPolicy policy);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_ZAP_AUTHENTICATOR_H_
