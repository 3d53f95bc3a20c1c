#include "model/kernels/thread_team.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
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

}  // namespace
}  // namespace actex
