#ifndef ACTEX_TESTS_MODEL_THREAD_COLLECTIVE_H_
#define ACTEX_TESTS_MODEL_THREAD_COLLECTIVE_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/collective.h"

namespace actex::test_support {

// The shards of one replica as threads of this process, meeting around a shared buffer.
// Test-only: the product's collectives travel over ZeroMQ. A shard that stops with an
// error abandons the group, so that its peers' collectives fail at once rather than
// wait for it forever.
class ThreadCollectiveGroup {
 public:
  explicit ThreadCollectiveGroup(int size);
  ~ThreadCollectiveGroup();

  // The Collective of shard `rank`; each is used by one thread.
  Collective& member(int rank);

  // Shard `rank` stopped (`why`): every collective waiting now, or called later, returns
  // an error naming it.
  void Abandon(int rank, const std::string& why);

 private:
  class Member;
  friend class Member;

  // Waits until every member has arrived, as a barrier does; an error once the group is
  // abandoned.
  std::expected<void, std::string> Meet();

  int size_;
  std::mutex mutex_;
  std::condition_variable met_;
  int arrived_ = 0;
  int64_t generation_ = 0;                 // meetings completed
  std::string abandoned_;                  // why, once a member stopped
  std::vector<std::vector<float>> slots_;  // one contribution per rank
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_MODEL_THREAD_COLLECTIVE_H_
