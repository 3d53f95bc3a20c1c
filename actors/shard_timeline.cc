#include "actors/shard_timeline.h"

#include <fmt/format.h>

namespace actex {

double ShardTimeline::Lap() {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - last_mark_).count();
  last_mark_ = now;
  return seconds;
}

void ShardTimeline::MarkReceived() {
  if (!started_) {  // the wait for the first batch is the model load's, not the stream's
    started_ = true;
    first_batch_ = last_mark_ = Clock::now();
    return;
  }
  waiting_ += Lap();
}

void ShardTimeline::MarkForwardDone(int64_t tokens) {
  forward_ += Lap();
  ++batches_;
  tokens_ += tokens;
}

void ShardTimeline::MarkHandedOn() { handing_on_ += Lap(); }

std::string ShardTimeline::Describe() const {
  if (batches_ == 0) return "no batch";
  const double whole = std::chrono::duration<double>(last_mark_ - first_batch_).count();
  return fmt::format(
      "{} batches, {} tokens in {:.2f} s since the first batch: forward {:.2f} s ({:.0f} %, "
      "{:.0f} tokens/s alone), waiting for batches {:.2f} s, handing on {:.2f} s",
      batches_, tokens_, whole, forward_, whole > 0 ? 100 * forward_ / whole : 100.0,
      forward_ > 0 ? tokens_ / forward_ : 0.0, waiting_, handing_on_);
}

}  // namespace actex
