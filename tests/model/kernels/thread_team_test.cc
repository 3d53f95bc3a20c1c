#include "model/kernels/thread_team.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace actex {
namespace {

TEST(ThreadTeam, RunsEveryTaskExactlyOnceOnItsMembers) {
  for (int size : {1, 2, 3}) {
    ThreadTeam team(size);
    ASSERT_EQ(team.size(), size);
    for (int64_t count : {0, 1, 5, 1000}) {  // repeated jobs reuse the same helpers
      std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
      std::atomic<int> bad_member{0};
      team.Run(count, [&](int64_t index, int member) {
        runs[index].fetch_add(1);
        if (member < 0 || member >= size) bad_member.fetch_add(1);
      });
      for (int64_t i = 0; i < count; ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
      EXPECT_EQ(bad_member.load(), 0);
    }
  }
}

TEST(ThreadTeam, HelpersShareTheWork) {
  ThreadTeam team(2);
  std::set<std::thread::id> threads;
  std::mutex mutex;
  std::condition_variable both_in;
  // Every task waits until both members have entered one, so whoever takes the first
  // task holds it until the other member takes the next: sharing is shown without
  // betting on how fast a helper wakes on a loaded machine. The deadline only turns a
  // team that never shares into a failure instead of a hang.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  team.Run(64, [&](int64_t, int) {
    std::unique_lock lock(mutex);
    threads.insert(std::this_thread::get_id());
    both_in.notify_all();
    both_in.wait_until(lock, deadline, [&] { return threads.size() == 2; });
  });
  EXPECT_EQ(threads.size(), 2u);
}

TEST(ThreadTeam, ForRangesCoversTheRangeWithDisjointPieces) {
  ThreadTeam team(2);
  for (int64_t total : {1, 7, 100, 12345}) {
    std::vector<std::atomic<int>> covered(static_cast<size_t>(total));
    std::atomic<int> pieces{0};
    team.ForRanges(total, 10, [&](int64_t first, int64_t end, int) {
      EXPECT_LT(first, end);
      pieces.fetch_add(1);
      for (int64_t i = first; i < end; ++i) covered[i].fetch_add(1);
    });
    for (int64_t i = 0; i < total; ++i) EXPECT_EQ(covered[i].load(), 1) << i << " of " << total;
    EXPECT_LE(pieces.load(), 8);  // at most four pieces per member
  }
}

// This process's mapped virtual memory, from /proc (VmSize, in bytes).
uint64_t MappedBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmSize:")) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

// What a container's pids limit or `ulimit -u` does: thread creation fails part way.
// The team stops the helpers it started (their condition variable would otherwise
// block its own destruction for ever) and throws, naming the thread and the limit.
// Run in a child: the address-space limit that makes the fifth thread's stack fail
// holds for the whole process.
TEST(ThreadTeam, AHelperThatCannotStartThrowsNamingItAfterStoppingTheOthers) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);  // a hang is a failure, not a stuck suite
    constexpr size_t kStack = size_t{1} << 30;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, kStack);
    pthread_setattr_default_np(&attributes);
    const rlimit limit{MappedBytes() + 4 * kStack + kStack / 2, RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &limit);
    try {
      ThreadTeam team(64);
      _exit(3);  // every thread started: the limit did not hold
    } catch (const std::system_error& e) {
      const std::string what = e.what();
      const bool named =
          what.find("cannot start thread ") == 0 &&
          what.find(" of a team of 64 (the process's thread limit") != std::string::npos;
      _exit(named ? 0 : 4);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status) << " (14: SIGALRM, a hang)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: no thread failed; 4: the message did not name it";
}

}  // namespace
}  // namespace actex
