#ifndef ACTEX_ACTORS_SHARD_TIMELINE_H_
#define ACTEX_ACTORS_SHARD_TIMELINE_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace actex {

// Where a device shard's time went from its first batch to the end of its stream:
// waiting for batches (the loader and tokenizer behind it), its forward (the device:
// on a GPU the forward returns once its taps are home, so this is the GPU's time plus
// launching), and handing activations on (SAE encoding, then the writer taking them).
// The forward's share of the whole says whether the device or the CPU side bounds the
// run. Not thread-safe: the shard's own thread records.
class ShardTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  // Each Mark ends the span since the previous one (or since the first message arrived)
  // and counts it as what the shard was doing in it: MarkReceived after each message
  // from the tokenizer (batch, chunk end or end of stream), the rest after a batch's
  // forward and after its activations were handed on.
  void MarkReceived();
  void MarkForwardDone(int64_t tokens);
  void MarkHandedOn();

  int64_t batches() const { return batches_; }
  double forward_seconds() const { return forward_; }
  // "4096 batches, 1048576 tokens in 5.2 s since the first batch: forward 4.9 s (94 %,
  // 214000 tokens/s alone), waiting for batches 0.1 s, handing on 0.2 s"; no batch:
  // "no batch".
  std::string Describe() const;

 private:
  // Seconds since the last mark, the mark moved to now.
  double Lap();

  bool started_ = false;
  Clock::time_point first_batch_, last_mark_;
  double waiting_ = 0, forward_ = 0, handing_on_ = 0;
  int64_t batches_ = 0, tokens_ = 0;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_SHARD_TIMELINE_H_
