#ifndef ACTEX_ACTORS_HOST_LAYOUT_H_
#define ACTEX_ACTORS_HOST_LAYOUT_H_

#include <map>
#include <string>
#include <vector>

#include "actors/mesh_plan.h"

namespace actex {

// A device shard that runs on this host.
struct LocalShard {
  int global_shard = 0;
  int replica = 0;
  int rank = 0;  // model rank inside its replica
  // Where its ring ingress binds: inproc when the predecessor is on this host,
  // "tcp://ADDRESS:*" (port picked by the system) when it is not.
  std::string ingress;
};

// This host's share of the mesh and the names of every ring endpoint.
class HostLayout {
 public:
  HostLayout(const MeshPlan& mesh, int host, std::string bind_address);

  const std::vector<LocalShard>& shards() const { return shards_; }
  const std::vector<int>& replicas() const { return replicas_; }  // with a shard here
  // The replica whose documents this host writes, or -1.
  int written_replica() const { return written_replica_; }
  bool IsLocal(int replica, int rank) const;

  static std::string RingName(int replica) { return "replica-" + std::to_string(replica); }
  // The key a tcp ingress is announced under in the rendezvous.
  static std::string RingKey(int replica, int rank);
  // The ring options' endpoints of `replica` as this host knows them before the
  // rendezvous: its own ingresses, deterministic inproc names for everyone else.
  std::vector<std::string> InitialEndpoints(int replica) const;
  // The complete table once the hosts met: `bound` holds this host's shards' actual
  // ingress endpoints (by RingKey), `announced` every host's tcp ingresses.
  std::vector<std::string> FinalEndpoints(int replica, const std::map<std::string, std::string>& bound,
                                          const std::map<std::string, std::string>& announced) const;

 private:
  MeshPlan mesh_;
  int host_;
  std::vector<LocalShard> shards_;
  std::vector<int> replicas_;
  int written_replica_ = -1;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_HOST_LAYOUT_H_
