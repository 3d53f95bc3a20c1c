#ifndef ACTEX_BASE_LOG_SAMPLING_H_
#define ACTEX_BASE_LOG_SAMPLING_H_

#include <cstdint>

namespace actex {

// Whether the `count`-th occurrence of a repeated event (1-based: a stranger's message
// dropped, a handshake refused) is worth a log line: the first ten, then every
// thousandth. A flood of bad input must not flood the log as well, yet the log still
// says that the flood goes on and how large it has grown.
inline bool ShouldLogOccurrence(uint64_t count) { return count <= 10 || count % 1000 == 0; }

}  // namespace actex

#endif  // ACTEX_BASE_LOG_SAMPLING_H_
