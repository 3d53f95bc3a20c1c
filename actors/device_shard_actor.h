#ifndef ACTEX_ACTORS_DEVICE_SHARD_ACTOR_H_
#define ACTEX_ACTORS_DEVICE_SHARD_ACTOR_H_

#include <expected>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actors/sae_plan.h"
#include "model/cpu_shard_device.h"
#include "model/model_weights.h"
#include "model/shard_device.h"
#include "model/shard_plan.h"
#include "model/sites.h"
#include "transport/actor.h"
#include "transport/ring_links.h"

namespace actex {

struct DeviceShardConfig {
  // Read-only and memory-mapped: every shard reads its own slice of the same file
  // mapping, so holding the model costs its file size once, not once per shard.
  std::shared_ptr<const ModelWeights> weights;
  ShardSlice slice;
  std::vector<Site> sites;
  // Encoded by rank 0 after each forward pass (on the shard's threads), each SAE's site
  // being one of `sites`; their latents go to the writer after the sites.
  std::vector<PlannedSae> saes;
  ShardDeviceMaker make_device = CpuShardDevices(1);  // where the shard runs
  std::string batches_endpoint;                       // binds a PULL: TokenBatch* EndOfStream
  // The replica's collective ring (rank == slice.rank). endpoints[rank] is where this
  // shard's ingress binds: inproc when its predecessor is on this host, else
  // "tcp://ADDRESS:*". With an empty setup_endpoint every endpoint is known up front.
  RingOptions ring;
  // Where the node collects bound endpoints (RingBound) and answers with the whole
  // ring (RingTable) once the hosts have met; see transport/PROTOCOL.md.
  std::string setup_endpoint;
  std::string activations_endpoint;  // rank 0 connects a PUSH to the writer
};

// One tensor-parallel slice of the model. Every shard of a replica receives the same
// batches, runs its slice of each layer and joins the all-reduces; rank 0 then holds
// the full activations and forwards them to the writer, each SAE's latents after them
// (storage/latent_sites.h: ids, values, count).
std::expected<std::unique_ptr<Actor>, std::string> StartDeviceShard(zmq::context_t& context,
                                                                    DeviceShardConfig config);

}  // namespace actex

#endif  // ACTEX_ACTORS_DEVICE_SHARD_ACTOR_H_
