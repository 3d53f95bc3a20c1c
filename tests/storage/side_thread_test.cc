// The writer's side thread: a job runs beside its owner and is waited for before the
// Running that started it goes, one job after another on the same thread.

#include "storage/side_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace actex {
namespace {

TEST(SideThread, RunsEachJobBesideItsOwnerOnOneThreadAndWaitsForIt) {
  SideThread side;
  std::thread::id first_thread;
  for (int round = 0; round < 100; ++round) {
    std::atomic<bool> release{false};
    int done = 0;
    std::thread::id ran_on;
    {
      SideThread::Running running = side.Start([&] {
        while (!release.load()) std::this_thread::yield();  // runs only beside the owner
        ran_on = std::this_thread::get_id();
        done = round + 1;
      });
      ASSERT_TRUE(running.started());
      release = true;  // the owner's own work would go here
    }                  // the Running waits for the job
    EXPECT_EQ(done, round + 1);
    EXPECT_NE(ran_on, std::this_thread::get_id());
    if (round == 0) first_thread = ran_on;
    EXPECT_EQ(ran_on, first_thread) << "a thread started per job";
  }
}

TEST(SideThread, WaitIsExplicitOrOnDestructionAndANotStartedJobIsTheCallers) {
  SideThread side;
  int done = 0;
  SideThread::Running running = side.Start([&] { done = 1; });
  running.Wait();
  EXPECT_EQ(done, 1);
  running.Wait();  // a second wait returns at once
  SideThread::Running not_started = SideThread::Running::NotStarted();
  EXPECT_FALSE(not_started.started());
  EXPECT_TRUE(not_started.Done());
  not_started.Wait();
}

// Done() tells, without waiting, whether the job ended: the writer lists a shard sealed
// beside it only once its seal is done.
TEST(SideThread, DoneSaysWhetherTheJobEndedWithoutWaiting) {
  SideThread side;
  std::atomic<bool> release{false};
  SideThread::Running running = side.Start([&] {
    while (!release.load()) std::this_thread::yield();
  });
  EXPECT_FALSE(running.Done());
  release = true;
  while (!running.Done()) std::this_thread::yield();
  running.Wait();
  EXPECT_TRUE(running.Done());
}

}  // namespace
}  // namespace actex
