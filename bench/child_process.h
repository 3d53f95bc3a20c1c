#ifndef ACTEX_BENCH_CHILD_PROCESS_H_
#define ACTEX_BENCH_CHILD_PROCESS_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace actex {

// How a child process ended and what it cost.
struct ChildResult {
  int exit_code = -1;          // -1 when killed by a signal
  double wall_seconds = 0;     // spawn to exit
  int64_t peak_rss_bytes = 0;  // the child's own ru_maxrss (not its children's)
  std::string output;          // stdout and stderr, interleaved as written
};

// Runs `args` (args[0] is the executable's path) with stdout and stderr sent to
// `log_path`, waits for it with wait4 and returns its resource use and output.
// An error only when the process cannot be started or the log cannot be read.
std::expected<ChildResult, std::string> RunChild(const std::vector<std::string>& args,
                                                 const std::string& log_path);

// The command line as a shell would show it, for logs.
std::string JoinArgs(const std::vector<std::string>& args);

}  // namespace actex

#endif  // ACTEX_BENCH_CHILD_PROCESS_H_
