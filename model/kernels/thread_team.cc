#include "model/kernels/thread_team.h"

#include <algorithm>
#include <string>
#include <system_error>

namespace actex {

ThreadTeam::ThreadTeam(int size) : size_(std::max(size, 1)) {
  for (int member = 1; member < size_; ++member) {
    try {
      helpers_.emplace_back([this, member] { HelperLoop(member); });
    } catch (const std::system_error& e) {
      // No destructor runs for a constructor that throws: the helpers started so far
      // wait on start_, whose destruction would block on them for ever.
      StopHelpers();
      throw std::system_error(e.code(), "cannot start thread " + std::to_string(member + 1) +
                                            " of a team of " + std::to_string(size_) +
                                            " (the process's thread limit: ulimit -u, or a "
                                            "container's pids limit)");
    }
  }
}

ThreadTeam::~ThreadTeam() { StopHelpers(); }

void ThreadTeam::StopHelpers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

void ThreadTeam::Work(int member) {
  std::unique_lock lock(mutex_);
  const std::function<void(int64_t, int)>& task = *task_;
  while (next_ < count_) {
    const int64_t index = next_++;
    lock.unlock();
    task(index, member);
    lock.lock();
  }
}

void ThreadTeam::HelperLoop(int member) {
  int64_t seen = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    Work(member);
    std::lock_guard lock(mutex_);
    if (--busy_helpers_ == 0) done_.notify_one();
  }
}

void ThreadTeam::Run(int64_t count, const std::function<void(int64_t index, int member)>& task) {
  if (count <= 0) return;
  if (size_ == 1 || count == 1) {
    for (int64_t index = 0; index < count; ++index) task(index, 0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    busy_helpers_ = size_ - 1;
    ++generation_;
  }
  start_.notify_all();
  Work(0);
  // Every helper must have left Work before `task` (the caller's) goes out of scope.
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return busy_helpers_ == 0; });
  task_ = nullptr;
}

void ThreadTeam::ForRanges(
    int64_t total, int64_t grain,
    const std::function<void(int64_t first, int64_t end, int member)>& body) {
  if (total <= 0) return;
  const int64_t pieces =
      std::clamp<int64_t>(total / std::max<int64_t>(grain, 1), 1, int64_t{4} * size_);
  const int64_t step = (total + pieces - 1) / pieces;
  Run((total + step - 1) / step, [&](int64_t piece, int member) {
    const int64_t first = piece * step;
    body(first, std::min(total, first + step), member);
  });
}

}  // namespace actex
