#ifndef ACTEX_MODEL_COLLECTIVE_H_
#define ACTEX_MODEL_COLLECTIVE_H_

#include <cstddef>
#include <expected>
#include <span>
#include <string>
#include <vector>

namespace actex {

// What a tensor-parallel shard of the model needs from its peers. The model never
// knows how the bytes travel: actors/ adapts transport/'s ring collectives (inproc
// or tcp) to this interface, and a replica of one shard uses SoloCollective.
//
// Every shard of a replica calls the same operations in the same order; an error
// (timeout, lost peer, malformed message) leaves the data unspecified.
class Collective {
 public:
  virtual ~Collective() = default;

  // This shard's rank in [0, size()) and the number of shards in the replica.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Replaces `data` on every shard by the element-wise sum over all shards.
  virtual std::expected<void, std::string> AllReduceSum(std::span<float> data) = 0;

  // Every shard contributes `local` (its own length, possibly different from the
  // others'); `gathered` receives all contributions in rank order.
  virtual std::expected<void, std::string> AllGather(
      std::span<const float> local, std::vector<std::vector<float>>* gathered) = 0;
};

// A replica held by a single shard: the reduce is the identity.
class SoloCollective final : public Collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::expected<void, std::string> AllReduceSum(std::span<float>) override { return {}; }
  std::expected<void, std::string> AllGather(
      std::span<const float> local, std::vector<std::vector<float>>* gathered) override {
    gathered->assign(1, std::vector<float>(local.begin(), local.end()));
    return {};
  }
};

}  // namespace actex

#endif  // ACTEX_MODEL_COLLECTIVE_H_
