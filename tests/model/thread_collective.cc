#include "tests/model/thread_collective.h"

#include <algorithm>

namespace actex::test_support {

class ThreadCollectiveGroup::Member final : public Collective {
 public:
  Member(ThreadCollectiveGroup* group, int rank) : group_(group), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_->size_; }

  std::expected<void, std::string> AllReduceSum(std::span<float> data) override {
    group_->slots_[rank_].assign(data.begin(), data.end());
    if (auto met = group_->Meet(); !met) return met;
    // Every rank adds in rank order, so all of them get bit-identical sums, as a
    // ring all-reduce (each chunk summed once, then broadcast) also guarantees.
    for (size_t i = 0; i < data.size(); ++i) {
      float sum = group_->slots_[0][i];
      for (int r = 1; r < group_->size_; ++r) sum += group_->slots_[r][i];
      data[i] = sum;
    }
    return group_->Meet();
  }

  std::expected<void, std::string> AllGather(std::span<const float> local,
                                             std::vector<std::vector<float>>* gathered) override {
    group_->slots_[rank_].assign(local.begin(), local.end());
    if (auto met = group_->Meet(); !met) return met;
    gathered->assign(group_->slots_.begin(), group_->slots_.end());
    return group_->Meet();
  }

 private:
  ThreadCollectiveGroup* group_;
  int rank_;
};

ThreadCollectiveGroup::ThreadCollectiveGroup(int size) : size_(size), slots_(size) {
  for (int rank = 0; rank < size; ++rank) members_.push_back(std::make_unique<Member>(this, rank));
}

ThreadCollectiveGroup::~ThreadCollectiveGroup() = default;

Collective& ThreadCollectiveGroup::member(int rank) { return *members_[rank]; }

void ThreadCollectiveGroup::Abandon(int rank, const std::string& why) {
  std::lock_guard lock(mutex_);
  if (abandoned_.empty()) abandoned_ = "shard " + std::to_string(rank) + " stopped: " + why;
  met_.notify_all();
}

std::expected<void, std::string> ThreadCollectiveGroup::Meet() {
  std::unique_lock lock(mutex_);
  if (!abandoned_.empty()) return std::unexpected(abandoned_);
  const int64_t generation = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    met_.notify_all();
    return {};
  }
  met_.wait(lock, [&] { return generation_ != generation || !abandoned_.empty(); });
  if (generation_ != generation) return {};
  return std::unexpected(abandoned_);
}

}  // namespace actex::test_support
