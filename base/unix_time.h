#ifndef ACTEX_BASE_UNIX_TIME_H_
#define ACTEX_BASE_UNIX_TIME_H_

#include <chrono>

namespace actex {

// Seconds since the Unix epoch by this host's wall clock, as monitor events and upload
// records carry them: comparable across hosts only as far as their clocks agree.
inline double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace actex

#endif  // ACTEX_BASE_UNIX_TIME_H_
