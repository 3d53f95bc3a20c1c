#include "actors/mesh_plan.h"

#include <cstdio>
#include <regex>

namespace actex {

std::vector<int> MeshPlan::ReplicasOnHost(int host) const {
  std::vector<int> replicas;
  const int first = host * shards_per_host, end = first + shards_per_host;
  for (int shard = first; shard < end; ++shard) {
    const int replica = shard / model;
    if (replicas.empty() || replicas.back() != replica) replicas.push_back(replica);
  }
  return replicas;
}

std::map<int, std::vector<int>> MeshPlan::LeaseFollowers() const {
  std::map<int, std::vector<int>> followers;
  if (!Leased()) return followers;
  for (int replica = 0; replica < data; ++replica) {
    const int writer = WriterHost(replica);
    const int last = HostOfShard(FirstShardOfReplica(replica) + model - 1);
    for (int host = writer + 1; host <= last; ++host) followers[writer].push_back(host);
  }
  return followers;
}

std::vector<int> MeshPlan::StopGroups() const {
  // Replicas and hosts both take consecutive shards, so a group is a run of hosts each
  // sharing a replica with the one before; it is named after its first replica.
  std::vector<int> groups;
  for (int host = 0; host < hosts; ++host) {
    const int first = ReplicasOnHost(host).front();
    const bool continues = host > 0 && ReplicasOnHost(host - 1).back() == first;
    groups.push_back(continues ? groups.back() : first);
  }
  return groups;
}

int MeshPlan::StandbyHost() const {
  if (!Leased() || hosts < 3) return -1;
  const std::vector<int> groups = StopGroups();
  for (int host = 1; host < hosts; ++host) {
    if (groups[host] != groups[0]) return host;
  }
  return -1;
}

std::string HostFolderName(int machine_id, int total_machines, int host) {
  char name[64];
  if (total_machines > 1) {
    std::snprintf(name, sizeof(name), "machine_%03d_host_%02d", machine_id, host);
  } else {
    std::snprintf(name, sizeof(name), "host_%02d", host);
  }
  return name;
}

std::string MeshPlan::HostFolder(int host) const {
  return HostFolderName(machine_id, total_machines, host);
}

std::string MeshPlan::Describe() const {
  return "data=" + std::to_string(data) + ",model=" + std::to_string(model);
}

std::expected<MeshPlan, std::string> PlanMesh(const std::string& mesh, int hosts,
                                              int shards_per_host, int machine_id,
                                              int total_machines, int64_t chunk_docs) {
  if (hosts < 1) return std::unexpected("--num-hosts must be at least 1");
  if (shards_per_host < 1) return std::unexpected("--shards-per-host must be at least 1");
  if (total_machines < 1 || machine_id < 0 || machine_id >= total_machines) {
    return std::unexpected("--machine-id " + std::to_string(machine_id) +
                           " must be in [0, --total-machines " + std::to_string(total_machines) +
                           ")");
  }
  auto chunks = ChunkRule::Of(chunk_docs);
  if (!chunks) return std::unexpected("--chunk-docs must be at least 1");
  MeshPlan plan{hosts, shards_per_host, 1, 1, machine_id, total_machines, *chunks};
  const int shards = hosts * shards_per_host;
  std::smatch match;
  static const std::regex kShape(R"(data=(\d+),model=(\d+))");
  if (mesh == "1d") {
    plan.model = shards;
  } else if (mesh == "2d") {
    plan.data = hosts;
    plan.model = shards_per_host;
  } else if (std::regex_match(mesh, match, kShape)) {
    plan.data = std::stoi(match[1]);
    plan.model = std::stoi(match[2]);
  } else {
    return std::unexpected("--mesh " + mesh + ": expected 1d, 2d or data=D,model=M");
  }
  if (plan.data < 1 || plan.model < 1 || plan.data * plan.model != shards) {
    return std::unexpected("--mesh " + mesh + ": data x model must equal the job's " +
                           std::to_string(hosts) + " hosts x " + std::to_string(shards_per_host) +
                           " shards per host = " + std::to_string(shards) + " device shards");
  }
  if (plan.model < shards_per_host) {
    // Two replicas' rank 0 would share a host and so its one output folder.
    return std::unexpected("--mesh " + mesh + ": model=" + std::to_string(plan.model) +
                           " is smaller than --shards-per-host " + std::to_string(shards_per_host) +
                           "; give each host whole replicas by lowering --shards-per-host");
  }
  return plan;
}

}  // namespace actex
