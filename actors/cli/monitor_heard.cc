#include "actors/cli/monitor_heard.h"

#include <spdlog/fmt/fmt.h>

namespace actex {
namespace {

// What the monitor waits for, for the lines that say it heard nothing.
constexpr const char* kWaitingFor =
    "waiting for the job's monitor publisher, which host 0's `actex node` (or `actex simulate`) "
    "opens at its --coordinator PORT+1 (the standby's PORT+1 once it took over)";

}  // namespace

std::string MonitorHeard::Describe(const std::string& endpoint, double seconds, bool keyed,
                                   bool waiting) const {
  const std::string next = std::string(waiting ? "still " : "it was ") + kWaitingFor;
  const std::string key_hint = keyed ? " (is it the job's --job-key-file?)"
                                     : " (if the job runs with a --job-key-file, give it here too)";
  if (events > 0) {
    return fmt::format("the last monitor event from {} came {:.0f} s ago", endpoint, seconds);
  }
  if (strangers > 0 || skipped > 0) {
    return fmt::format(
        "received nothing it understands from {} in {:.0f} s ({} connection(s) failed "
        "ZeroMQ's handshake, {} message(s) were not monitor events): something else listens "
        "there, or a job with a key{}; {}",
        endpoint, seconds, strangers, skipped, key_hint, next);
  }
  if (connections > 0) {
    return fmt::format("connected to {}, but no monitor event came in {:.0f} s{}; {}", endpoint,
                       seconds, key_hint, next);
  }
  return fmt::format("heard nothing from {} in {:.0f} s: nothing accepts a connection there; {}",
                     endpoint, seconds, next);
}

}  // namespace actex
