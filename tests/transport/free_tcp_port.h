#ifndef ACTEX_TESTS_TRANSPORT_FREE_TCP_PORT_H_
#define ACTEX_TESTS_TRANSPORT_FREE_TCP_PORT_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

namespace actex {

// A tcp port on 127.0.0.1 that is free right now and not in `taken`: the system picks
// one for a plain socket that is closed at once (synchronously, unlike a ZeroMQ
// unbind). A failure is the test's (ADD_FAILURE) and returns 0.
inline int FreeTcpPort(const std::set<int>& taken = {}) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(probe, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    EXPECT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t length = sizeof(address);
    EXPECT_EQ(::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length), 0);
    ::close(probe);
    const int port = ntohs(address.sin_port);
    if (!taken.contains(port)) return port;
  }
  ADD_FAILURE() << "no free port";
  return 0;
}

}  // namespace actex

#endif  // ACTEX_TESTS_TRANSPORT_FREE_TCP_PORT_H_
