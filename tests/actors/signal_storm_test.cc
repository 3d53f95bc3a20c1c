// A signal that lands on any thread of the process (a profiler's SIGPROF, a
// debugger, a harness's alarm) must not fail a run: ZeroMQ reports it as EINTR from
// whatever call was waiting, and every blocking call of the pipeline asks again.
// This runs a two-shard extraction while another thread sends a signal with a no-op
// handler to every thread, over and over, and compares with a quiet run.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "actors/node.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

std::atomic<int64_t> signals_handled{0};

void CountSignal(int) { signals_handled.fetch_add(1, std::memory_order_relaxed); }

// Installs a no-op SIGUSR1 handler without SA_RESTART (so waits are interrupted, as
// with most handlers) and restores the previous one on destruction.
class NoOpHandler {
 public:
  NoOpHandler() {
    struct sigaction action {};
    action.sa_handler = CountSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(SIGUSR1, &action, &previous_);
  }
  ~NoOpHandler() { sigaction(SIGUSR1, &previous_, nullptr); }

 private:
  struct sigaction previous_ {};
};

// Sends SIGUSR1 to every thread of the process but itself, every few hundred
// microseconds, until destroyed.
class SignalStorm {
 public:
  SignalStorm()
      : thread_([this] {
          const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
          while (!stop_.load()) {
            SignalEveryThreadBut(self);
            std::this_thread::sleep_for(std::chrono::microseconds(300));
          }
        }) {}
  ~SignalStorm() {
    stop_.store(true);
    thread_.join();
  }

 private:
  static void SignalEveryThreadBut(pid_t self) {
    DIR* tasks = opendir("/proc/self/task");
    if (tasks == nullptr) return;
    while (const dirent* entry = readdir(tasks)) {
      const pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
      if (tid > 0 && tid != self) syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
    }
    closedir(tasks);
  }

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

ExtractOptions Options(const TempDir& dir) {
  // Enough short documents that messages flow on every link for a while.
  std::ostringstream corpus;
  for (int doc = 0; doc < 300; ++doc) {
    std::vector<int32_t> ids;
    for (int i = 0; i < 5 + doc % 23; ++i) ids.push_back((doc * 31 + i * 7) % 200 + 1);
    corpus << nlohmann::json{{"input_ids", ids}}.dump() << '\n';
  }
  ExtractOptions options;
  options.model_dir = kTinyModelDir;
  options.data = {dir.Write("corpus.jsonl", corpus.str())};
  options.out_dir = dir.path() + "/out";
  options.layers = {0, 1};
  options.sites = {"resid_post"};
  options.shards = 2;
  options.dtype = "float32";
  options.blas_threads = 1;
  options.batch_tokens = 64;  // many small batches: many sends and receives
  return options;
}

TEST(SignalStorm, ExtractionUnderSignalsOnEveryThreadEqualsAQuietOne) {
  TempDir quiet_dir, stormy_dir;
  auto quiet = RunExtraction(Options(quiet_dir));
  ASSERT_TRUE(quiet) << quiet.error();

  NoOpHandler handler;
  std::expected<ExtractionSummary, std::string> stormy;
  {
    SignalStorm storm;
    stormy = RunExtraction(Options(stormy_dir));
  }
  ASSERT_TRUE(stormy) << stormy.error();
  // The storm really reached the run (hundreds of signals, not a handful).
  EXPECT_GT(signals_handled.load(), 100);
  RecordProperty("signals_handled", std::to_string(signals_handled.load()));

  EXPECT_EQ(stormy->docs, quiet->docs);
  EXPECT_EQ(stormy->tokens, quiet->tokens);
  auto expected = ReadHostFolder(quiet->host_dir);
  auto actual = ReadHostFolder(stormy->host_dir);
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [doc, rows] : expected) {
    EXPECT_EQ(actual.at(doc).token_ids, rows.token_ids) << doc;
    EXPECT_EQ(actual.at(doc).sites, rows.sites) << doc;
  }
}

}  // namespace
}  // namespace actex
