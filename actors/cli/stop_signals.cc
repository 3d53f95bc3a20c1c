#include "actors/cli/stop_signals.h"

#include <csignal>

namespace actex {
namespace {

// Process state, because a handler can reach nothing else; lock-free atomics are
// safe to touch from one.
StopSignals& Counter() {
  static StopSignals signals;
  static_assert(std::atomic<int>::is_always_lock_free);
  return signals;
}

void CountSignal(int signal) {
  Counter().last.store(signal);
  Counter().count.fetch_add(1);
}

}  // namespace

const StopSignals& CountStopSignals() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = CountSignal;
    sigemptyset(&action.sa_mask);
    // No SA_RESTART: a blocking call returns EINTR, which every ZeroMQ call retries
    // (transport/interrupted.h), and the supervisor looks at the counter each slice.
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    // A closed terminal or ssh session sends SIGHUP, whose default would kill the run
    // mid-chunk. A run started under nohup (SIGHUP ignored) keeps ignoring it, as asked.
    struct sigaction hangup {};
    if (sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN) {
      sigaction(SIGHUP, &action, nullptr);
    }
    return true;
  }();
  (void)installed;
  return Counter();
}

}  // namespace actex
