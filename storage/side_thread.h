#ifndef ACTEX_STORAGE_SIDE_THREAD_H_
#define ACTEX_STORAGE_SIDE_THREAD_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace actex {

// One thread kept beside its owner to run one job at a time while the owner does
// something else: the writer's statistics of a large document beside its rounding and
// spilling, without a thread started per document (~20 µs each), a group of its sites'
// rounding and spilling beside the others, or a closed shard's seal beside the next
// shard. One owner thread uses it; a job never outlives the
// Running that started it.
class SideThread {
 public:
  SideThread() = default;
  // Joins the thread (no job can be running: every Running waited for its own).
  ~SideThread();
  SideThread(const SideThread&) = delete;
  SideThread& operator=(const SideThread&) = delete;

  // A started job: waits for it on destruction, or at Wait().
  class [[nodiscard]] Running {
   public:
    Running(Running&& other) noexcept;
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;
    Running& operator=(Running&&) = delete;
    ~Running() { Wait(); }
    // A job the caller runs itself.
    static Running NotStarted() { return Running(nullptr); }
    // Whether the job runs on the side thread (else the caller must run it).
    bool started() const { return side_ != nullptr; }
    // Whether the job ended (or was never started), without waiting.
    bool Done() const;
    void Wait();

   private:
    friend class SideThread;
    explicit Running(SideThread* side) : side_(side) {}
    SideThread* side_;
  };

  // Starts `job` on the side thread (made at the first call). Where no thread can be
  // had, the Running is not started() and `job` has not run: the caller runs it.
  Running Start(std::function<void()> job);

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> job_;  // the job posted and not yet done (empty: none)
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SIDE_THREAD_H_
