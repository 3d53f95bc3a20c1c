#ifndef ACTEX_ACTORS_RING_COLLECTIVE_H_
#define ACTEX_ACTORS_RING_COLLECTIVE_H_

#include <memory>

#include "model/collective.h"
#include "transport/ring_links.h"

namespace actex {

// Lets the model's forward pass reduce over transport's ZeroMQ ring, which may mix
// inproc links (shards of one host) and tcp links (between hosts).
class RingCollective final : public Collective {
 public:
  explicit RingCollective(std::unique_ptr<RingLinks> links) : links_(std::move(links)) {}

  int rank() const override;
  int size() const override;
  std::expected<void, std::string> AllReduceSum(std::span<float> data) override;
  std::expected<void, std::string> AllGather(std::span<const float> local,
                                             std::vector<std::vector<float>>* gathered) override;

 private:
  std::unique_ptr<RingLinks> links_;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_RING_COLLECTIVE_H_
