#ifndef ACTEX_TESTS_MODEL_MODEL_TEST_UTIL_H_
#define ACTEX_TESTS_MODEL_MODEL_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/cpu_shard_device.h"
#include "model/decoder_forward.h"
#include "model/model_weights.h"
#include "storage/safetensors.h"
#include "tests/support/fixture_dirs.h"

namespace actex::test_support {

std::string TinyBf16FixtureDir();  // kTinyModelDir's model-bf16 (BF16 weights)

// A tensor of `file` as float32 (F32) or int32 (I32) values; fails the test if absent.
std::vector<float> ReadFloats(const SafetensorsFile& file, const std::string& name);
std::vector<int32_t> ReadInts(const SafetensorsFile& file, const std::string& name);

float MaxAbs(std::span<const float> values);
float MaxAbsDifference(std::span<const float> a, std::span<const float> b);

// Runs `batch` through `shards` shards of `weights` (each in its own thread, joined
// through a ThreadCollectiveGroup) on the devices `make_device` makes (default: one CPU
// thread each) and returns every rank's captures.
std::vector<std::vector<SiteActivations>> RunShards(
    const std::shared_ptr<const ModelWeights>& weights, int shards, const std::vector<Site>& sites,
    const PackedBatch& batch, const ShardDeviceMaker& make_device = CpuShardDevices(1));

// One sequence with positions 0..n-1.
PackedBatch SingleSequence(std::vector<int32_t> token_ids);

// Sequences of `lengths` (positions from 0 in each) with ids below `vocab` from a
// generator seeded with `seed`.
PackedBatch MakeBatch(const std::vector<int32_t>& lengths, int vocab, uint32_t seed);

// embed, the six sites of each dense layer below `layers`, ln_final.
std::vector<Site> EverySite(int layers);

// The model folder `dir`'s weights; null, failing the test, where they do not open.
std::shared_ptr<const ModelWeights> OpenOrFail(const std::string& dir);

// Copies every file of directory `from` (not recursively) into `to`.
void CopyFolder(const std::string& from, const std::string& to);

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_MODEL_MODEL_TEST_UTIL_H_
