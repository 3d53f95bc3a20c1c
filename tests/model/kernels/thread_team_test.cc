#include "model/kernels/thread_team.h"

#include <gtest/gtest.h>

#include <atomic>
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
  // Long enough tasks that the helper wakes up before the caller has taken them all.
  team.Run(64, [&](int64_t, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard lock(mutex);
    threads.insert(std::this_thread::get_id());
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
