#ifndef ACTEX_TESTS_MODEL_THREAD_COLLECTIVE_H_
#define ACTEX_TESTS_MODEL_THREAD_COLLECTIVE_H_

#include <barrier>
#include <memory>
#include <vector>

#include "model/collective.h"

namespace actex::testing {

// The shards of one replica as threads of this process, meeting at a barrier around
// a shared buffer. Test-only: the product's collectives travel over ZeroMQ.
class ThreadCollectiveGroup {
 public:
  explicit ThreadCollectiveGroup(int size);
  ~ThreadCollectiveGroup();

  // The Collective of shard `rank`; each is used by one thread.
  Collective& member(int rank);

 private:
  class Member;
  friend class Member;

  int size_;
  std::barrier<> barrier_;
  std::vector<std::vector<float>> slots_;  // one contribution per rank
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace actex::testing

#endif  // ACTEX_TESTS_MODEL_THREAD_COLLECTIVE_H_
