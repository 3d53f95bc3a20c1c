#include "actors/device_shard_actor.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "actors/actor_io.h"
#include "actors/ring_collective.h"
#include "actors/shard_timeline.h"
#include "model/decoder_forward.h"
#include "sae/sae_encoder.h"
#include "storage/latent_sites.h"
#include "transport/interrupted.h"
#include "transport/schema.h"

namespace actex {
namespace {

constexpr int kBatchQueue = 2;

PackedBatch ToPackedBatch(TokenBatchMessage& message) {
  PackedBatch batch;
  batch.token_ids = std::move(message.token_ids);
  batch.positions.reserve(batch.token_ids.size());
  for (const SequenceInfo& sequence : message.sequences) {
    batch.sequence_lengths.push_back(sequence.length);
    for (int32_t position = 0; position < sequence.length; ++position) {
      batch.positions.push_back(position);
    }
  }
  return batch;
}

// Joins the replica's ring. Rings that cross hosts learn their peers' tcp ports
// only after the rendezvous, so the shard reports where it bound and waits for the
// node's table, or for the node to ask it to stop meanwhile.
std::expected<std::unique_ptr<RingLinks>, ActorHalt> ConnectRing(ActorContext& actor,
                                                                 const DeviceShardConfig& config) {
  // A stop request (a lost host, a failed actor) must end a wait for a peer's chunk
  // that will never come, instead of the collective timeout.
  RingOptions ring = config.ring;
  ring.interrupt = &actor.pipe();
  if (config.setup_endpoint.empty()) {
    auto links = RingLinks::Create(actor.context(), ring);
    if (!links) return ActorHalt::Failed(links.error());
    return std::move(*links);
  }
  auto links = RingLinks::Bind(actor.context(), ring);
  if (!links) return ActorHalt::Failed(links.error());
  zmq::socket_t setup = MakePipelineSocket(actor.context(), zmq::socket_type::dealer, 16);
  RetryInterrupted([&] { setup.connect(config.setup_endpoint); });
  auto sent =
      Send(setup, RingBoundMessage{config.ring.ring, config.ring.rank, (*links)->bound_endpoint()});
  if (!sent) return ActorHalt::Failed(sent.error());
  actor.SignalReady();
  auto reply = ReceiveUnlessStopped(actor, setup);
  if (!reply) return std::unexpected(reply.error());
  auto table = reply->As<RingTableMessage>();
  if (!table) return ActorHalt::Failed("ring set-up: " + table.error());
  const size_t next = (config.ring.rank + 1) % config.ring.endpoints.size();
  if (table->endpoints.size() != config.ring.endpoints.size()) {
    return ActorHalt::Failed("ring set-up: the table has the wrong number of members");
  }
  if (auto connected = (*links)->ConnectToNext(table->endpoints[next]); !connected) {
    return ActorHalt::Failed(connected.error());
  }
  return std::move(*links);
}

// Rank 0's SAEs, each with the encoder that keeps its buffers between batches and
// where its site is among the captures.
struct SaeAtSite {
  SaeEncoder encoder;
  size_t capture = 0;
};

std::vector<std::unique_ptr<SaeAtSite>> MakeEncoders(const DeviceShardConfig& config) {
  std::vector<std::unique_ptr<SaeAtSite>> encoders;
  for (const PlannedSae& sae : config.saes) {
    const size_t capture = static_cast<size_t>(
        std::find(config.sites.begin(), config.sites.end(), sae.site) - config.sites.begin());
    encoders.push_back(std::make_unique<SaeAtSite>(SaeEncoder(*sae.model, sae.k), capture));
  }
  return encoders;
}

// Each SAE's latents for the batch whose captures are `captures`.
std::vector<SaeLatents> EncodeLatents(const std::vector<SiteActivations>& captures,
                                      std::vector<std::unique_ptr<SaeAtSite>>& encoders,
                                      ThreadTeam& team) {
  std::vector<SaeLatents> latents(encoders.size());
  for (size_t i = 0; i < encoders.size(); ++i) {
    const SiteActivations& capture = captures[encoders[i]->capture];
    const int64_t tokens = static_cast<int64_t>(capture.values.size()) / capture.width;
    encoders[i]->encoder.EncodeTopK(capture.values.data(), capture.width, tokens, &latents[i],
                                    &team);
  }
  return latents;
}

// Adds each SAE's latents to the message as three sites, in the writer's order
// (StoredLatentSites: ids [tokens, K], values [tokens, K], count [tokens, 1]).
void AppendLatents(std::vector<SaeLatents> latents, const std::vector<Site>& sites,
                   const std::vector<std::unique_ptr<SaeAtSite>>& encoders,
                   ActivationBatchMessage& activations, std::vector<zmq::message_t>& frames) {
  for (size_t i = 0; i < encoders.size(); ++i) {
    const Site& site = sites[encoders[i]->capture];
    for (StoredSite& stored :
         StoredLatentSites(site.HookName(), static_cast<int>(encoders[i]->encoder.k()))) {
      activations.site_names.push_back(std::move(stored.name));
      activations.site_widths.push_back(stored.width);
    }
    frames.push_back(PayloadFrame(std::move(latents[i].ids)));
    frames.push_back(PayloadFrame(std::move(latents[i].values)));
    frames.push_back(PayloadFrame(std::move(latents[i].counts)));
  }
}

// Computes every batch until the tokenizer's EndOfStream; rank 0 hands on the
// activations, each ChunkEnd and the EndOfStream, in the order they came. `timeline`
// records where the time went.
std::expected<void, ActorHalt> ComputeBatches(ActorContext& actor, DecoderShard& shard,
                                              RingCollective& collective, zmq::socket_t& batches,
                                              zmq::socket_t* writer,
                                              const std::vector<Site>& shard_sites,
                                              std::vector<std::unique_ptr<SaeAtSite>>& encoders,
                                              ShardTimeline& timeline) {
  std::vector<SiteActivations> captures;
  while (true) {
    auto message = ReceiveUnlessStopped(actor, batches);
    if (!message) return std::unexpected(message.error());
    timeline.MarkReceived();
    if (message->type == MessageType::kEndOfStream) {
      if (writer == nullptr) return {};
      auto end = message->As<EndOfStreamMessage>();
      if (!end) return ActorHalt::Failed("from the tokenizer: " + end.error());
      return SendUnlessStopped(actor, *writer, *end);
    }
    if (message->type == MessageType::kChunkEnd) {
      if (writer == nullptr) continue;
      auto chunk_end = message->As<ChunkEndMessage>();
      if (!chunk_end) return ActorHalt::Failed("from the tokenizer: " + chunk_end.error());
      if (auto sent = SendUnlessStopped(actor, *writer, *chunk_end); !sent) return sent;
      continue;
    }
    auto batch = message->As<TokenBatchMessage>();
    if (!batch) return ActorHalt::Failed("from the tokenizer: " + batch.error());
    PackedBatch packed = ToPackedBatch(*batch);
    auto forward = shard.Forward(packed, collective, &captures);
    if (!forward) {
      return ActorHalt::Failed("batch " + std::to_string(batch->batch_id) + ": " + forward.error());
    }
    timeline.MarkForwardDone(static_cast<int64_t>(packed.token_ids.size()));
    if (writer == nullptr) continue;

    ActivationBatchMessage activations;
    activations.batch_id = batch->batch_id;
    activations.sequences = std::move(batch->sequences);
    activations.token_ids = std::move(packed.token_ids);
    std::vector<zmq::message_t> frames;
    // Encoded before the captures' buffers move into their frames.
    std::vector<SaeLatents> latents = EncodeLatents(captures, encoders, shard.team());
    for (SiteActivations& capture : captures) {
      activations.site_names.push_back(capture.site.HookName());
      activations.site_widths.push_back(capture.width);
      // An integer site (expert ids) travels as its int32s; the writer knows which it is.
      frames.push_back(capture.site.IsInteger() ? PayloadFrame(std::move(capture.integers))
                                                : PayloadFrame(std::move(capture.values)));
    }
    AppendLatents(std::move(latents), shard_sites, encoders, activations, frames);
    if (auto sent = SendUnlessStopped(actor, *writer, activations, std::move(frames)); !sent) {
      return sent;
    }
    timeline.MarkHandedOn();
  }
}

std::expected<void, std::string> RunDeviceShard(ActorContext& actor,
                                                const DeviceShardConfig& config) {
  auto shard = DecoderShard::Create(config.weights, config.slice, config.sites, config.make_device);
  if (!shard) return std::unexpected(shard.error());
  spdlog::info("device shard {} of replica {}: {}", config.slice.rank, config.ring.ring,
               (*shard)->device_description());
  zmq::socket_t batches = MakePipelineSocket(actor.context(), zmq::socket_type::pull, kBatchQueue);
  RetryInterrupted([&] { batches.bind(config.batches_endpoint); });
  auto links = ConnectRing(actor, config);
  if (!links) return EndActor(links.error());  // stopped while waiting for the other hosts
  RingCollective collective(std::move(*links));
  // Rank 0 alone hands the replica's activations to the writer.
  zmq::socket_t writer;
  if (config.slice.rank == 0) {
    writer = MakePipelineSocket(actor.context(), zmq::socket_type::push, kBatchQueue);
    RetryInterrupted([&] { writer.connect(config.activations_endpoint); });
  }
  std::vector<std::unique_ptr<SaeAtSite>> encoders;
  if (config.slice.rank == 0) encoders = MakeEncoders(config);
  actor.SignalReady();
  ShardTimeline timeline;
  auto computed =
      ComputeBatches(actor, **shard, collective, batches,
                     config.slice.rank == 0 ? &writer : nullptr, config.sites, encoders, timeline);
  if (timeline.batches() > 0) {
    spdlog::info("device shard {} of replica {}: {}", config.slice.rank, config.ring.ring,
                 timeline.Describe());
  }
  return EndActor(std::move(computed));
}

}  // namespace

std::expected<std::unique_ptr<Actor>, std::string> StartDeviceShard(zmq::context_t& context,
                                                                    DeviceShardConfig config) {
  std::string name = "device shard " + std::to_string(config.slice.rank);
  return Actor::Start(context, std::move(name), [config = std::move(config)](ActorContext& actor) {
    return RunDeviceShard(actor, config);
  });
}

}  // namespace actex
