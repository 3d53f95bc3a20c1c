#ifndef ACTEX_COORDINATION_LIVENESS_H_
#define ACTEX_COORDINATION_LIVENESS_H_

#include <chrono>
#include <expected>
#include <string>

namespace actex {

// How the coordinator and a node each tell that the other is alive (PROTOCOL.md
// section 8, "Liveness"). Both sides must use the same values.
struct Liveness {
  // A heartbeat goes to the peer this often.
  std::chrono::milliseconds heartbeat_interval{1000};
  // A peer from which nothing arrived this long is lost.
  std::chrono::milliseconds heartbeat_timeout{60000};
  // A peer whose connection closed is lost unless a message of it arrives within this
  // grace (ZeroMQ reconnects on its own after a network blip; a crashed process never
  // does).
  std::chrono::milliseconds disconnect_grace{5000};

  // Refuses values the protocol cannot work with: every one positive, the timeout and
  // the grace longer than the interval.
  std::expected<void, std::string> Check() const {
    if (heartbeat_interval <= std::chrono::milliseconds(0) ||
        heartbeat_timeout <= heartbeat_interval || disconnect_grace <= heartbeat_interval) {
      return std::unexpected(
          std::string("timeouts must be positive, and heartbeat_timeout and disconnect_grace "
                      "longer than heartbeat_interval"));
    }
    return {};
  }
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_LIVENESS_H_
