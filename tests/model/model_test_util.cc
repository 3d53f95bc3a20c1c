#include "tests/model/model_test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "model/shard_plan.h"
#include "tests/model/thread_collective.h"
#include "tests/support/fixture_dirs.h"

namespace actex::test_support {

std::string TinyBf16FixtureDir() { return kTinyModelDir + "/model-bf16"; }

std::vector<float> ReadFloats(const SafetensorsFile& file, const std::string& name) {
  auto it = file.tensors().find(name);
  EXPECT_NE(it, file.tensors().end()) << "no tensor " << name << " in " << file.path();
  if (it == file.tensors().end()) return {};
  EXPECT_EQ(it->second.dtype, "F32") << name;
  std::vector<float> values(it->second.bytes.size() / sizeof(float));
  std::memcpy(values.data(), it->second.bytes.data(), values.size() * sizeof(float));
  return values;
}

std::vector<int32_t> ReadInts(const SafetensorsFile& file, const std::string& name) {
  auto it = file.tensors().find(name);
  EXPECT_NE(it, file.tensors().end()) << "no tensor " << name << " in " << file.path();
  if (it == file.tensors().end()) return {};
  EXPECT_EQ(it->second.dtype, "I32") << name;
  std::vector<int32_t> values(it->second.bytes.size() / sizeof(int32_t));
  std::memcpy(values.data(), it->second.bytes.data(), values.size() * sizeof(int32_t));
  return values;
}

float MaxAbs(std::span<const float> values) {
  float maximum = 0.0f;
  for (float value : values) maximum = std::max(maximum, std::fabs(value));
  return maximum;
}

float MaxAbsDifference(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  float maximum = 0.0f;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const float difference = std::fabs(a[i] - b[i]);
    if (std::isnan(difference)) return INFINITY;
    maximum = std::max(maximum, difference);
  }
  return maximum;
}

std::vector<std::vector<SiteActivations>> RunShards(
    const std::shared_ptr<const ModelWeights>& weights, int shards, const std::vector<Site>& sites,
    const PackedBatch& batch, const ShardDeviceMaker& make_device) {
  std::vector<std::unique_ptr<DecoderShard>> models;
  for (int rank = 0; rank < shards; ++rank) {
    auto slice = PlanShard(weights->config(), rank, shards);
    EXPECT_TRUE(slice.has_value()) << slice.error();
    if (!slice) return {};
    auto model = DecoderShard::Create(weights, *slice, sites, make_device);
    EXPECT_TRUE(model.has_value()) << model.error();
    if (!model) return {};
    models.push_back(std::move(*model));
  }
  ThreadCollectiveGroup group(shards);
  std::vector<std::vector<SiteActivations>> captures(shards);
  std::vector<std::string> errors(shards);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < shards; ++rank) {
    threads.emplace_back([&, rank] {
      auto done = models[rank]->Forward(batch, group.member(rank), &captures[rank]);
      if (!done) {
        errors[rank] = done.error();
        group.Abandon(rank, done.error());  // its peers stop waiting for it
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < shards; ++rank) {
    EXPECT_EQ(errors[rank], "") << "shard " << rank << " of " << shards;
  }
  return captures;
}

PackedBatch SingleSequence(std::vector<int32_t> token_ids) {
  PackedBatch batch;
  batch.positions.resize(token_ids.size());
  for (size_t i = 0; i < token_ids.size(); ++i) batch.positions[i] = static_cast<int32_t>(i);
  batch.sequence_lengths = {static_cast<int32_t>(token_ids.size())};
  batch.token_ids = std::move(token_ids);
  return batch;
}

std::vector<Site> EverySite(int layers) {
  std::vector<Site> sites = {{SiteKind::kEmbed, -1}};
  for (int layer = 0; layer < layers; ++layer) {
    for (SiteKind kind : {SiteKind::kResidPre, SiteKind::kAttnOut, SiteKind::kResidMid,
                          SiteKind::kMlpPost, SiteKind::kMlpOut, SiteKind::kResidPost}) {
      sites.push_back({kind, layer});
    }
  }
  sites.push_back({SiteKind::kLnFinal, -1});
  return sites;
}

PackedBatch MakeBatch(const std::vector<int32_t>& lengths, int vocab, uint32_t seed) {
  PackedBatch batch;
  uint32_t state = seed;
  for (int32_t length : lengths) {
    for (int32_t t = 0; t < length; ++t) {
      state = state * 1664525u + 1013904223u;
      batch.token_ids.push_back(static_cast<int32_t>((state >> 8) % vocab));
      batch.positions.push_back(t);
    }
    batch.sequence_lengths.push_back(length);
  }
  return batch;
}

std::shared_ptr<const ModelWeights> OpenOrFail(const std::string& dir) {
  auto weights = ModelWeights::Open(dir);
  EXPECT_TRUE(weights.has_value()) << weights.error();
  return weights ? *weights : nullptr;
}

void CopyFolder(const std::string& from, const std::string& to) {
  for (const auto& entry : std::filesystem::directory_iterator(from)) {
    if (entry.is_regular_file()) {
      std::filesystem::copy_file(entry.path(), std::filesystem::path(to) / entry.path().filename(),
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }
}

}  // namespace actex::test_support
