#ifndef ACTEX_ACTORS_MESH_PLAN_H_
#define ACTEX_ACTORS_MESH_PLAN_H_

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <vector>

namespace actex {

// Where every device shard of a job lives. Global shard g (0 <= g < hosts *
// shards_per_host) sits on host g / shards_per_host; replicas are `data` groups of
// `model` consecutive global shards, so replica r is shards [r*model, (r+1)*model)
// and its model rank k is global shard r*model + k. Documents are dealt to replicas
// a chunk at a time (chunk c holds doc ids [c*chunk_docs, (c+1)*chunk_docs)), by
// chunk number alone (deterministic: the same command gives the same split), after
// the outer split between independent jobs (--machine-id M --total-machines K).
struct MeshPlan {
  int hosts = 1;
  int shards_per_host = 1;
  int data = 1;   // data-parallel replicas
  int model = 1;  // device shards per replica
  int machine_id = 0;
  int total_machines = 1;
  int64_t chunk_docs = 1;  // --chunk-docs

  int HostOfShard(int global_shard) const { return global_shard / shards_per_host; }
  int FirstShardOfReplica(int replica) const { return replica * model; }
  // Whether every replica lies on one host (no collective crosses hosts).
  bool ReplicasWithinHosts() const {
    return model <= shards_per_host && shards_per_host % model == 0;
  }
  // Whether replicas take chunks by lease (PROTOCOL.md "Leases") instead of the fixed
  // share ReplicaOfDocument deals: in a job of several hosts each holding shards of
  // one replica only, so a replica can take on more or less without any other
  // waiting. The replica's writer host asks; the others of a replica that spans hosts
  // follow its grants (LeaseFollowers).
  bool Leased() const { return hosts > 1 && model % shards_per_host == 0; }
  // In a leased job, per writer host of a replica that spans hosts, its other hosts.
  std::map<int, std::vector<int>> LeaseFollowers() const;
  // The host that holds a replica's model rank 0 and so writes its documents.
  int WriterHost(int replica) const { return HostOfShard(FirstShardOfReplica(replica)); }
  // The replica that computes `doc_id` on this machine, or -1 when another machine
  // (another job of the same corpus) owns it.
  int ReplicaOfDocument(int64_t doc_id) const;
  // How many of the first `documents` doc ids ReplicaOfDocument gives `replica`.
  int64_t DocumentsOfReplica(int replica, int64_t documents) const;
  // Per host, the number of the group of hosts that stop together because they
  // share a replica (CoordinatorOptions::stop_groups): the lowest replica of the
  // group's hosts.
  std::vector<int> StopGroups() const;
  // The host whose node runs the standby coordinator (CoordinatorOptions::standby_host):
  // in a leased job of three hosts or more, the first host outside host 0's stop group,
  // so that host 0's loss leaves it running. -1 when there is none: with two hosts,
  // one left cannot tell host 0's loss from a split network.
  int StandbyHost() const;
  // Replicas with at least one shard on `host`, ascending.
  std::vector<int> ReplicasOnHost(int host) const;
  // Output folder of `host` below OUT: host_NN, or machine_MMM_host_NN with machines.
  std::string HostFolder(int host) const;
  std::string Describe() const;  // "data=2,model=3"
};

// Parses --mesh: "1d" (one replica over every shard of every host), "2d" (one replica
// per host) or "data=D,model=M", and checks it against the job's size. Errors name
// the flag and what would fit.
std::expected<MeshPlan, std::string> PlanMesh(const std::string& mesh, int hosts,
                                              int shards_per_host, int machine_id,
                                              int total_machines, int64_t chunk_docs);

}  // namespace actex

#endif  // ACTEX_ACTORS_MESH_PLAN_H_
