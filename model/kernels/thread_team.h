#ifndef ACTEX_MODEL_KERNELS_THREAD_TEAM_H_
#define ACTEX_MODEL_KERNELS_THREAD_TEAM_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace actex {

// How finely the decoder's element-wise work is cut for a team: rows per piece of a
// row-wise kernel, elements per piece of a flat one; enough work to outweigh waking a
// helper.
inline constexpr int64_t kTeamRowGrain = 32;
inline constexpr int64_t kTeamElementGrain = 32768;

// A fixed team of threads: everything a shard computes (its share of each product,
// attention, element-wise kernels, widening 16-bit weights) runs as tasks on it, so a
// shard that owns N cores keeps all of them busy. The calling thread is member 0 and
// takes part; members 1..size()-1 are helper threads that sleep on a condition
// variable between jobs.
//
// One job at a time, started from one thread (the team's owner); not reentrant.
class ThreadTeam {
 public:
  // `size` >= 1 members; 1 runs every job on the caller. Throws std::system_error,
  // naming the thread and the likely limit, when a helper cannot be started (the
  // helpers started before it are stopped first).
  explicit ThreadTeam(int size);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return size_; }

  // Runs task(index, member) for every index in [0, count), each exactly once, spread
  // dynamically over the members; `member` in [0, size()) names the thread (for
  // per-thread scratch). Returns when every task has finished. Tasks must not throw.
  void Run(int64_t count, const std::function<void(int64_t index, int member)>& task);

  // Splits [0, total) into contiguous ranges of at least `grain` items (a few per
  // member, for balance) and runs body(first, end, member) on each.
  void ForRanges(int64_t total, int64_t grain,
                 const std::function<void(int64_t first, int64_t end, int member)>& body);

 private:
  void HelperLoop(int member);
  void Work(int member);
  void StopHelpers();  // wakes every helper to return, and joins it

  const int size_;
  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  // The current job, guarded by mutex_ (next_ is claimed under it as well: tasks are
  // coarse, so one lock per task costs nothing measurable).
  const std::function<void(int64_t, int)>* task_ = nullptr;
  int64_t count_ = 0, next_ = 0;
  int64_t generation_ = 0;
  int busy_helpers_ = 0;
  bool stopping_ = false;
};

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_THREAD_TEAM_H_
