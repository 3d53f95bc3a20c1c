#include "actors/ring_collective.h"

#include "transport/ring_all_gather.h"
#include "transport/ring_all_reduce.h"

namespace actex {

int RingCollective::rank() const { return links_->rank(); }
int RingCollective::size() const { return links_->size(); }

std::expected<void, std::string> RingCollective::AllReduceSum(std::span<float> data) {
  return RingAllReduce(*links_, data);
}

std::expected<void, std::string> RingCollective::AllGather(
    std::span<const float> local, std::vector<std::vector<float>>* gathered) {
  return RingAllGather(*links_, local, gathered);
}

}  // namespace actex
