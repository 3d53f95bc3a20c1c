#include "transport/numeric_endpoint.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace actex {

std::string NumericEndpoint(const std::string& endpoint) {
  constexpr std::string_view kTcp = "tcp://";
  if (!endpoint.starts_with(kTcp)) return endpoint;
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon < kTcp.size()) return endpoint;
  const std::string host = endpoint.substr(kTcp.size(), colon - kTcp.size());
  in_addr ipv4{};
  if (host.empty() || host == "*" || host.front() == '[' ||
      inet_pton(AF_INET, host.c_str(), &ipv4) == 1) {
    return endpoint;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return endpoint;
  }
  char text[INET_ADDRSTRLEN] = {};
  const auto* address = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  const bool written = inet_ntop(AF_INET, &address->sin_addr, text, sizeof(text)) != nullptr;
  freeaddrinfo(found);
  if (!written) return endpoint;
  return std::string(kTcp) + text + endpoint.substr(colon);
}

}  // namespace actex
