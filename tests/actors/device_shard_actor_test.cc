// Device shard actors against their messages alone: the tiny Qwen2 fixture cut into two
// tensor-parallel shards joined by an inproc ring; TokenBatches in, rank 0's
// ActivationBatches out, compared with what HF transformers computed.

#include "actors/device_shard_actor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "extraction_reader.h"
#include "transport/wire.h"

namespace actex {
namespace {

constexpr auto kShardPatience = std::chrono::seconds(30);
const std::string kFixture = std::string(ACTEX_FIXTURES_DIR) + "/qwen2-tiny";

class DeviceShardActorTest : public ::testing::Test {
 protected:
  // Starts `shards` shards capturing resid_post of both layers. The writer's PULL
  // binds first, as in a node.
  void Start(int shards) {
    activations_.bind("inproc://test-activations");
    auto weights = ModelWeights::Open(kFixture);
    ASSERT_TRUE(weights) << weights.error();
    auto sites = ParseSites({"resid_post"}, {0, 1}, (*weights)->config());
    ASSERT_TRUE(sites) << sites.error();
    std::vector<std::string> ring;
    for (int rank = 0; rank < shards; ++rank) {
      ring.push_back("inproc://test-ring/" + std::to_string(rank));
    }
    for (int rank = 0; rank < shards; ++rank) {
      auto slice = PlanShard((*weights)->config(), rank, shards);
      ASSERT_TRUE(slice) << slice.error();
      DeviceShardConfig config;
      config.weights = *weights;
      config.slice = *slice;
      config.sites = *sites;
      config.batches_endpoint = "inproc://test-batches/" + std::to_string(rank);
      config.ring.ring = "replica-0";
      config.ring.rank = rank;
      config.ring.endpoints = ring;
      config.activations_endpoint = "inproc://test-activations";
      auto shard = StartDeviceShard(context_, std::move(config));
      ASSERT_TRUE(shard) << shard.error();
      shards_.push_back(std::move(*shard));
      batches_.emplace_back(context_, zmq::socket_type::push);
      batches_.back().connect("inproc://test-batches/" + std::to_string(rank));
    }
  }

  void Broadcast(const auto& message) {
    for (zmq::socket_t& socket : batches_) ASSERT_TRUE(Send(socket, message));
  }

  zmq::context_t context_;
  zmq::socket_t activations_{context_, zmq::socket_type::pull};
  std::vector<zmq::socket_t> batches_;
  std::vector<std::unique_ptr<Actor>> shards_;
};

// Largest |actual - expected| over the rows [first, first + tokens) of a [*, 64] site,
// relative to the largest |expected|.
double RelativeError(const std::vector<float>& site, int64_t first,
                     const std::vector<float>& expected) {
  double error = 0, scale = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    error = std::max(error, std::abs(double(site[first * 64 + i]) - expected[i]));
    scale = std::max(scale, std::abs(double(expected[i])));
  }
  return error / scale;
}

TEST_F(DeviceShardActorTest, TwoShardsOfAPackedBatchGiveWhatHfComputedThroughRankZero) {
  Start(2);
  const std::string expected = kFixture + "/expected.safetensors";
  const std::vector<int32_t> len7 = FixtureIds(expected, "len7.input_ids");
  const std::vector<int32_t> len33 = FixtureIds(expected, "len33.input_ids");
  TokenBatchMessage batch;
  batch.batch_id = 0;
  batch.sequences = {{7, 0, 7, true}, {33, 0, 33, true}};
  batch.token_ids = len7;
  batch.token_ids.insert(batch.token_ids.end(), len33.begin(), len33.end());
  Broadcast(batch);
  Broadcast(EndOfStreamMessage{2, 0, 1, ""});

  auto message = Receive(activations_, kShardPatience);
  ASSERT_TRUE(message && *message) << "no activations from rank 0";
  auto activations = (*message)->As<ActivationBatchMessage>();
  ASSERT_TRUE(activations) << activations.error();
  EXPECT_EQ(activations->token_ids, batch.token_ids);
  ASSERT_EQ(activations->site_names,
            (std::vector<std::string>{"blocks.0.hook_resid_post", "blocks.1.hook_resid_post"}));
  ASSERT_EQ((*message)->payloads.size(), 2u);
  std::vector<std::vector<float>> sites;
  for (const zmq::message_t& frame : (*message)->payloads) {
    auto floats = FloatsFromFrame(frame);
    ASSERT_TRUE(floats) << floats.error();
    ASSERT_EQ(floats->size(), 40u * 64);
    sites.push_back(std::move(*floats));
  }
  // blocks.0.hook_resid_post is HF's hidden_states.1; blocks.1's (the last layer's) is
  // last_layer_pre_norm (the fixture's README).
  for (const auto& [name, first] : {std::pair{std::string("len7"), 0}, {"len33", 7}}) {
    EXPECT_LE(RelativeError(sites[0], first, FixtureTensor(expected, name + ".hidden_states.1")),
              2e-5)
        << name;
    EXPECT_LE(
        RelativeError(sites[1], first, FixtureTensor(expected, name + ".last_layer_pre_norm")),
        2e-5)
        << name;
  }

  auto end = Receive(activations_, kShardPatience);
  ASSERT_TRUE(end && *end);
  auto forwarded = (*end)->As<EndOfStreamMessage>();
  ASSERT_TRUE(forwarded) << "rank 0 forwards the tokenizer's EndOfStream";
  EXPECT_EQ(forwarded->documents, 2);
  for (auto& shard : shards_) EXPECT_TRUE(shard->Join());
  EXPECT_FALSE(Receive(activations_, std::chrono::milliseconds(200)).value().has_value())
      << "only rank 0 sends to the writer";
}

TEST_F(DeviceShardActorTest, AMalformedBatchFailsTheShardNamingIt) {
  Start(1);
  TokenBatchMessage batch;
  batch.batch_id = 4;
  batch.sequences = {{0, 0, 5, true}};  // claims 5 tokens
  batch.token_ids = {1, 2, 3};          // has 3
  Broadcast(batch);
  auto joined = shards_[0]->Join();
  ASSERT_FALSE(joined);
  EXPECT_NE(joined.error().find("device shard 0: batch 4"), std::string::npos) << joined.error();
}

}  // namespace
}  // namespace actex
