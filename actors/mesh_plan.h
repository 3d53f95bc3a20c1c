#ifndef ACTEX_ACTORS_MESH_PLAN_H_
#define ACTEX_ACTORS_MESH_PLAN_H_

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <vector>

#include "storage/chunk_rule.h"

namespace actex {

// The output folder of host `host`: "host_NN", or "machine_MMM_host_NN" when the
// corpus is split over `total_machines` independent jobs (machine `machine_id`).
std::string HostFolderName(int machine_id, int total_machines, int host);

// Where every device shard of a job lives. Global shard g (0 <= g < hosts *
// shards_per_host) sits on host g / shards_per_host; replicas are `data` groups of
// `model` consecutive global shards, so replica r is shards [r*model, (r+1)*model)
// and its model rank k is global shard r*model + k. The corpus is cut into chunks
// (`chunks`, storage/chunk_rule.h); independent jobs of one corpus (--machine-id M
// --total-machines K) split it by chunk number (share()), and within a job of
// several hosts the replicas lease the chunks (PROTOCOL.md "Leases").
struct MeshPlan {
  int hosts = 1;
  int shards_per_host = 1;
  int data = 1;   // data-parallel replicas
  int model = 1;  // device shards per replica
  int machine_id = 0;
  int total_machines = 1;
  ChunkRule chunks;  // --chunk-docs

  // This job's share of the corpus's chunks among --total-machines.
  MachineShare share() const { return {machine_id, total_machines}; }

  int HostOfShard(int global_shard) const { return global_shard / shards_per_host; }
  int FirstShardOfReplica(int replica) const { return replica * model; }
  // Whether every replica lies on one host (no collective crosses hosts).
  bool ReplicasWithinHosts() const {
    return model <= shards_per_host && shards_per_host % model == 0;
  }
  // Whether replicas take chunks by lease instead of reading the job's share in
  // order: in every job of several hosts. A replica's writer host asks; the other
  // hosts of a replica that spans hosts follow its grants (LeaseFollowers).
  bool Leased() const { return hosts > 1; }
  // Per writer host of a replica that spans hosts, the replica's other hosts. A host
  // may follow one replica's writer and lead another, or follow two.
  std::map<int, std::vector<int>> LeaseFollowers() const;
  // The host that holds a replica's model rank 0 and so writes its documents.
  int WriterHost(int replica) const { return HostOfShard(FirstShardOfReplica(replica)); }
  // Whether this job, and not another of the same corpus, computes `doc_id`.
  bool OwnsDocument(int64_t doc_id) const { return chunks.InShare(doc_id, share()); }
  // How many of the first `documents` doc ids this job owns.
  int64_t DocumentsOwned(int64_t documents) const { return chunks.DocsInShare(documents, share()); }
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
