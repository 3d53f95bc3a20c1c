#ifndef ACTEX_TESTS_ACTORS_ACTEX_PROCESS_H_
#define ACTEX_TESTS_ACTORS_ACTEX_PROCESS_H_

// Test support: the real `actex` binary as a child process, the way users and
// launch scripts run it, with its output captured to files.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/test_files.h"

namespace actex {

class ActexProcess {
 public:
  // Starts `actex ARGS...`; stdout and stderr go to `output_prefix`.out/.err. A
  // non-empty `working_dir` is the child's current directory (relative paths in
  // ARGS, `output_prefix` and `stdin_path` are still the test's). A non-empty
  // `launcher` runs it as `LAUNCHER... actex ARGS...` (`ip netns exec NAME`, which
  // becomes actex: signals still reach it).
  ActexProcess(const std::string& output_prefix, std::vector<std::string> args,
               const std::string& stdin_path = "/dev/null", const std::string& working_dir = "",
               const std::vector<std::string>& launcher = {});
  ~ActexProcess();  // kills the process if it still runs

  // The exit code (128 + signal when killed by one), once the process ended; past
  // `limit` it is killed and the calling test fails.
  int Wait(std::chrono::milliseconds limit);
  // The exit code if the process has ended, without waiting.
  std::optional<int> Poll();
  void Signal(int signal);

  std::string out() const;
  std::string err() const;
  long max_rss_kb() const { return max_rss_kb_; }
  pid_t pid() const { return pid_; }

 private:
  void Reap(int status, long max_rss_kb);

  std::string out_path_, err_path_;
  pid_t pid_ = 0;
  std::optional<int> exit_code_;
  long max_rss_kb_ = 0;
};

// Path of the actex binary under test.
const std::string& ActexBinary();

// How one run of actex ended: its exit code and what it printed.
struct ActexOutcome {
  int exit_code = -1;
  std::string out, err;
  long max_rss_kb = 0;
};

// Runs `actex ARGS...` to its end (output files at `output_prefix`.out/.err; in
// `working_dir` where not empty); past `limit` it is killed and the calling test fails.
ActexOutcome RunActex(const std::string& output_prefix, std::vector<std::string> args,
                      std::chrono::milliseconds limit = std::chrono::seconds(120),
                      const std::string& working_dir = "");
// The same with its output files at `dir`/run.out and .err, stdin from `stdin_path`.
ActexOutcome RunActex(const TempDir& dir, std::vector<std::string> args,
                      const std::string& stdin_path = "/dev/null");

}  // namespace actex

#endif  // ACTEX_TESTS_ACTORS_ACTEX_PROCESS_H_
