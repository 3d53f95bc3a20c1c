#ifndef ACTEX_TESTS_FUZZ_FUZZ_CHECK_H_
#define ACTEX_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

// An invariant of the code under test that an input broke: prints what and where,
// then aborts, which libFuzzer reports as a crash and saves the input for.
#define FUZZ_CHECK(condition, ...)                                                             \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n  ", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                                       \
      std::fprintf(stderr, "\n");                                                              \
      std::abort();                                                                            \
    }                                                                                          \
  } while (false)

#endif  // ACTEX_TESTS_FUZZ_FUZZ_CHECK_H_
