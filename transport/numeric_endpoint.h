#ifndef ACTEX_TRANSPORT_NUMERIC_ENDPOINT_H_
#define ACTEX_TRANSPORT_NUMERIC_ENDPOINT_H_

#include <string>

namespace actex {

// "tcp://NAME:PORT" with NAME looked up now (its first IPv4 address), for a socket to
// connect to: libzmq resolves a name again at every reconnection, on the I/O thread all
// of a context's sockets share, so a peer whose name stopped resolving (a container gone
// with its DNS record) would stall every other socket's traffic while each lookup times
// out. An endpoint already numeric, a wildcard, another transport, or a name that does
// not resolve now (a peer not up yet: libzmq keeps trying it) is returned as given.
std::string NumericEndpoint(const std::string& endpoint);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_NUMERIC_ENDPOINT_H_
