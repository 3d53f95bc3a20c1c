#ifndef ACTEX_ACTORS_CLI_MONITOR_HEARD_H_
#define ACTEX_ACTORS_CLI_MONITOR_HEARD_H_

// What `actex monitor` heard at its endpoint before (and between) events, and the line
// that says so: nothing, a connection without events, or something that is not the
// job's ZeroMQ publisher.

#include <cstdint>
#include <string>

namespace actex {

// What reached the monitor's socket so far, from ZeroMQ's connection events.
struct MonitorHeard {
  int64_t connections = 0;  // tcp connections made to the endpoint
  int64_t strangers = 0;    // connections dropped in ZeroMQ's handshake
  int64_t skipped = 0;      // messages that were not monitor events
  int64_t events = 0;       // monitor events received

  enum class State { kSilent, kConnected, kStranger, kEvents };
  State state() const {
    return events > 0                     ? State::kEvents
           : strangers > 0 || skipped > 0 ? State::kStranger
           : connections > 0              ? State::kConnected
                                          : State::kSilent;
  }

  // One line on what was heard from `endpoint` in `seconds` without an event.
  // `waiting`: it goes on waiting (else it gives up).
  std::string Describe(const std::string& endpoint, double seconds, bool keyed, bool waiting) const;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_MONITOR_HEARD_H_
