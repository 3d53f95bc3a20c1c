#include "storage/side_thread.h"

#include <system_error>
#include <utility>

namespace actex {

SideThread::~SideThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

SideThread::Running::Running(Running&& other) noexcept
    : side_(std::exchange(other.side_, nullptr)) {}

bool SideThread::Running::Done() const {
  if (side_ == nullptr) return true;
  std::lock_guard lock(side_->mutex_);
  return !side_->job_;
}

void SideThread::Running::Wait() {
  if (side_ == nullptr) return;
  std::unique_lock lock(side_->mutex_);
  side_->changed_.wait(lock, [&] { return !side_->job_; });
  side_ = nullptr;
}

SideThread::Running SideThread::Start(std::function<void()> job) {
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { Loop(); });
    } catch (const std::system_error&) {  // no thread to be had: the caller runs it
      return Running(nullptr);
    }
  }
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !job_; });  // one job at a time
    job_ = std::move(job);
  }
  changed_.notify_all();
  return Running(this);
}

void SideThread::Loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || job_; });
    if (!job_) return;  // stopping, nothing posted
    lock.unlock();
    job_();  // the owner waits for it and touches job_ only through the lock
    lock.lock();
    job_ = nullptr;
    changed_.notify_all();
  }
}

}  // namespace actex
