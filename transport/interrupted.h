#ifndef ACTEX_TRANSPORT_INTERRUPTED_H_
#define ACTEX_TRANSPORT_INTERRUPTED_H_

#include <cerrno>
#include <zmq.hpp>

namespace actex {

// Runs one blocking ZeroMQ call (poll, send, recv, a socket option read) again for
// as long as a signal interrupts it. Any thread of the process may take a signal
// (a profiler's SIGPROF, a test harness's SIGALRM, a terminal's SIGWINCH), and
// ZeroMQ then throws EINTR from whatever it was waiting in: that is never a failure
// of the socket. Every other error is thrown on to the caller.
//
// A retried poll or timed receive starts its timeout afresh; callers with a deadline
// compute what is left before each call (see Receive with a timeout).
template <typename Call>
decltype(auto) RetryInterrupted(Call&& call) {
  while (true) {
    try {
      return call();
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
  }
}

}  // namespace actex

#endif  // ACTEX_TRANSPORT_INTERRUPTED_H_
