#ifndef ACTEX_BENCH_STOPWATCH_H_
#define ACTEX_BENCH_STOPWATCH_H_

// The benches' timing by the steady clock.

#include <chrono>
#include <functional>

namespace actex {

using BenchClock = std::chrono::steady_clock;

// Seconds since `start`.
inline double SecondsSince(BenchClock::time_point start) {
  return std::chrono::duration<double>(BenchClock::now() - start).count();
}

// Seconds that one call of `run` takes.
inline double SecondsToRun(const std::function<void()>& run) {
  const auto start = BenchClock::now();
  run();
  return SecondsSince(start);
}

}  // namespace actex

#endif  // ACTEX_BENCH_STOPWATCH_H_
