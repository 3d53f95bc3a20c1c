#ifndef ACTEX_TESTS_TRANSPORT_WAIT_UNTIL_H_
#define ACTEX_TESTS_TRANSPORT_WAIT_UNTIL_H_

#include <chrono>
#include <functional>
#include <thread>

namespace actex {

// Polls `condition` every 5 ms until it holds (true) or `timeout` passes (false): for
// what another thread or process does in its own time.
inline bool WaitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace actex

#endif  // ACTEX_TESTS_TRANSPORT_WAIT_UNTIL_H_
