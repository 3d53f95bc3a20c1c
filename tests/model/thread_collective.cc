#include "tests/model/thread_collective.h"

#include <algorithm>

namespace actex::testing {

class ThreadCollectiveGroup::Member final : public Collective {
 public:
  Member(ThreadCollectiveGroup* group, int rank) : group_(group), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_->size_; }

  std::expected<void, std::string> AllReduceSum(std::span<float> data) override {
    group_->slots_[rank_].assign(data.begin(), data.end());
    group_->barrier_.arrive_and_wait();
    // Every rank adds in rank order, so all of them get bit-identical sums, as a
    // ring all-reduce (each chunk summed once, then broadcast) also guarantees.
    for (size_t i = 0; i < data.size(); ++i) {
      float sum = group_->slots_[0][i];
      for (int r = 1; r < group_->size_; ++r) sum += group_->slots_[r][i];
      data[i] = sum;
    }
    group_->barrier_.arrive_and_wait();
    return {};
  }

  std::expected<void, std::string> AllGather(std::span<const float> local,
                                             std::vector<std::vector<float>>* gathered) override {
    group_->slots_[rank_].assign(local.begin(), local.end());
    group_->barrier_.arrive_and_wait();
    gathered->assign(group_->slots_.begin(), group_->slots_.end());
    group_->barrier_.arrive_and_wait();
    return {};
  }

 private:
  ThreadCollectiveGroup* group_;
  int rank_;
};

ThreadCollectiveGroup::ThreadCollectiveGroup(int size) : size_(size), barrier_(size), slots_(size) {
  for (int rank = 0; rank < size; ++rank) members_.push_back(std::make_unique<Member>(this, rank));
}

ThreadCollectiveGroup::~ThreadCollectiveGroup() = default;

Collective& ThreadCollectiveGroup::member(int rank) { return *members_[rank]; }

}  // namespace actex::testing
