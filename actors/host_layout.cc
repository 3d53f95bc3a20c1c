#include "actors/host_layout.h"

namespace actex {
namespace {

std::string InprocIngress(int replica, int rank) {
  return "inproc://ring/" + std::to_string(replica) + "/" + std::to_string(rank);
}

}  // namespace

HostLayout::HostLayout(const MeshPlan& mesh, int host, std::string bind_address)
    : mesh_(mesh), host_(host), replicas_(mesh.ReplicasOnHost(host)) {
  for (int global = host * mesh.shards_per_host; global < (host + 1) * mesh.shards_per_host;
       ++global) {
    LocalShard shard;
    shard.global_shard = global;
    shard.replica = global / mesh.model;
    shard.rank = global % mesh.model;
    const int predecessor = shard.replica * mesh.model + (shard.rank + mesh.model - 1) % mesh.model;
    shard.ingress = mesh.HostOfShard(predecessor) == host
                        ? InprocIngress(shard.replica, shard.rank)
                        : "tcp://" + bind_address + ":*";
    shards_.push_back(shard);
  }
  for (int replica : replicas_) {
    if (mesh.WriterHost(replica) == host) written_replica_ = replica;
  }
}

bool HostLayout::IsLocal(int replica, int rank) const {
  return mesh_.HostOfShard(replica * mesh_.model + rank) == host_;
}

std::string HostLayout::RingKey(int replica, int rank) {
  return "ring/" + std::to_string(replica) + "/" + std::to_string(rank);
}

std::vector<std::string> HostLayout::InitialEndpoints(int replica) const {
  std::vector<std::string> endpoints;
  for (int rank = 0; rank < mesh_.model; ++rank) endpoints.push_back(InprocIngress(replica, rank));
  for (const LocalShard& shard : shards_) {
    if (shard.replica == replica) endpoints[shard.rank] = shard.ingress;
  }
  return endpoints;
}

std::vector<std::string> HostLayout::FinalEndpoints(
    int replica, const std::map<std::string, std::string>& bound,
    const std::map<std::string, std::string>& announced) const {
  std::vector<std::string> endpoints = InitialEndpoints(replica);
  for (int rank = 0; rank < mesh_.model; ++rank) {
    const std::string key = RingKey(replica, rank);
    const auto& source = IsLocal(replica, rank) ? bound : announced;
    if (auto found = source.find(key); found != source.end()) endpoints[rank] = found->second;
  }
  return endpoints;
}

}  // namespace actex
