#include "actors/device_shard_actor.h"

#include "actors/actor_io.h"
#include "actors/ring_collective.h"
#include "model/decoder_forward.h"
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
// node's table; std::nullptr means the node asked the shard to stop meanwhile.
std::expected<std::unique_ptr<RingLinks>, std::string> ConnectRing(ActorContext& actor,
                                                                  const DeviceShardConfig& config) {
  // A stop request (a lost host, a failed actor) must end a wait for a peer's chunk
  // that will never come, instead of the collective timeout.
  RingOptions ring = config.ring;
  ring.interrupt = &actor.pipe();
  if (config.setup_endpoint.empty()) return RingLinks::Create(actor.context(), ring);
  auto links = RingLinks::Bind(actor.context(), ring);
  if (!links) return links;
  zmq::socket_t setup = MakePipelineSocket(actor.context(), zmq::socket_type::dealer, 16);
  RetryInterrupted([&] { setup.connect(config.setup_endpoint); });
  auto sent = Send(setup, RingBoundMessage{config.ring.ring, config.ring.rank,
                                           (*links)->bound_endpoint()});
  if (!sent) return std::unexpected(sent.error());
  actor.SignalReady();
  auto reply = ReceiveUnlessStopped(actor, setup);
  if (!reply) return std::unexpected(reply.error());
  if (!*reply) return nullptr;
  auto table = (*reply)->As<RingTableMessage>();
  if (!table) return std::unexpected("ring set-up: " + table.error());
  const size_t next = (config.ring.rank + 1) % config.ring.endpoints.size();
  if (table->endpoints.size() != config.ring.endpoints.size()) {
    return std::unexpected("ring set-up: the table has the wrong number of members");
  }
  if (auto connected = (*links)->ConnectToNext(table->endpoints[next]); !connected) {
    return std::unexpected(connected.error());
  }
  return links;
}

std::expected<void, std::string> RunDeviceShard(ActorContext& actor,
                                                const DeviceShardConfig& config) {
  auto shard =
      DecoderShard::Create(config.weights, config.slice, config.sites, config.blas_threads);
  if (!shard) return std::unexpected(shard.error());
  zmq::socket_t batches = MakePipelineSocket(actor.context(), zmq::socket_type::pull, kBatchQueue);
  RetryInterrupted([&] { batches.bind(config.batches_endpoint); });
  auto links = ConnectRing(actor, config);
  if (!links) return std::unexpected(links.error());
  if (!*links) return {};  // stopped while waiting for the other hosts
  RingCollective collective(std::move(*links));
  const bool forwards_activations = config.slice.rank == 0;
  zmq::socket_t writer;
  if (forwards_activations) {
    writer = MakePipelineSocket(actor.context(), zmq::socket_type::push, kBatchQueue);
    RetryInterrupted([&] { writer.connect(config.activations_endpoint); });
  }
  actor.SignalReady();

  std::vector<SiteActivations> captures;
  while (true) {
    auto message = ReceiveUnlessStopped(actor, batches);
    if (!message) return std::unexpected(message.error());
    if (!*message) return {};
    if ((*message)->type == MessageType::kEndOfStream) {
      if (!forwards_activations) return {};
      auto end = (*message)->As<EndOfStreamMessage>();
      if (!end) return std::unexpected("from the tokenizer: " + end.error());
      auto sent = SendUnlessStopped(actor, writer, *end);
      if (!sent) return std::unexpected(sent.error());
      return {};
    }
    auto batch = (*message)->As<TokenBatchMessage>();
    if (!batch) return std::unexpected("from the tokenizer: " + batch.error());
    PackedBatch packed = ToPackedBatch(*batch);
    auto forward = (*shard)->Forward(packed, collective, &captures);
    if (!forward) {
      return std::unexpected("batch " + std::to_string(batch->batch_id) + ": " + forward.error());
    }
    if (!forwards_activations) continue;

    ActivationBatchMessage activations;
    activations.batch_id = batch->batch_id;
    activations.sequences = std::move(batch->sequences);
    activations.token_ids = std::move(packed.token_ids);
    std::vector<zmq::message_t> frames;
    for (SiteActivations& capture : captures) {
      activations.site_names.push_back(capture.site.HookName());
      activations.site_widths.push_back(capture.width);
      frames.push_back(PayloadFrame(std::move(capture.values)));
    }
    auto sent = SendUnlessStopped(actor, writer, activations, std::move(frames));
    if (!sent) return std::unexpected(sent.error());
    if (!*sent) return {};
  }
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
