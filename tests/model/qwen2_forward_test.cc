// The forward pass apart from HF parity (see qwen2_forward_parity_test.cc): sharding
// and thread-team agreement, 16-bit weights and the meaning of every site
// (qwen2_forward_batches_test.cc: early stopping, buffer reuse, packed sequences, errors).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "model/decoder_forward.h"
#include "model/kernels/half_float.h"
#include "model/random_model.h"
#include "model/shard_plan.h"
#include "tests/model/model_test_util.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using test_support::EverySite;
using test_support::MakeBatch;
using test_support::MaxAbs;
using test_support::MaxAbsDifference;
using test_support::OpenOrFail;

// Every shard count in `shard_counts` gives what one shard gives, on every rank.
void ExpectShardsAgree(const std::shared_ptr<const ModelWeights>& weights,
                       const std::vector<int>& shard_counts, const PackedBatch& batch) {
  const std::vector<Site> sites = EverySite(weights->config().layers);
  const auto reference = test_support::RunShards(weights, 1, sites, batch);
  ASSERT_EQ(reference.size(), 1u);
  for (int shards : shard_counts) {
    const auto captures = test_support::RunShards(weights, shards, sites, batch);
    ASSERT_EQ(static_cast<int>(captures.size()), shards);
    float worst = 0.0f;
    for (int rank = 0; rank < shards; ++rank) {
      ASSERT_EQ(captures[rank].size(), sites.size());
      for (size_t i = 0; i < sites.size(); ++i) {
        const auto& expected = reference[0][i].values;
        const float difference = MaxAbsDifference(captures[rank][i].values, expected);
        const float scale = MaxAbs(expected);
        EXPECT_LE(difference, 1e-5f * scale)
            << shards << " shards, rank " << rank << ", " << sites[i].HookName();
        worst = std::max(worst, difference / scale);
      }
    }
    std::printf("shards %d vs 1: worst max|d|/max|ref| over all sites %.3g\n", shards, worst);
  }
}

TEST(DecoderShard, EveryShardCountAgreesWithOneShardAtEverySite) {
  auto weights = OpenOrFail(kTinyModelDir);
  ASSERT_NE(weights, nullptr);
  ExpectShardsAgree(weights, {2, 3, 4}, MakeBatch({5, 17, 40}, 512, 1));
}

TEST(DecoderShard, UnevenSplitsOfFourteenHeadsAgreeWithOneShard) {
  // Qwen2.5-0.5B's layer shapes (14 heads, 2 KV heads, 4864 columns) in BF16.
  TempDir dir;
  RandomModelOptions options;
  options.output_dir = dir.path();
  options.preset = "qwen2.5-0.5b";
  options.vocab_size = 300;
  options.layers = 2;
  options.dtype = "bfloat16";
  options.seed = 5;
  auto made = MakeRandomModel(options);
  ASSERT_TRUE(made.has_value()) << made.error();
  auto weights = OpenOrFail(dir.path());
  ASSERT_NE(weights, nullptr);
  std::vector<int> counts;
  for (int shards = 2; shards <= 14; ++shards) counts.push_back(shards);
  ExpectShardsAgree(weights, counts, MakeBatch({13, 11}, 300, 2));
}

// A shard's team cuts every product into shares of output features: any team size
// agrees with one thread, and a team repeats its own results bit for bit.
TEST(DecoderShard, TeamsOfAnySizeAgreeWithOneThreadAndRepeatExactly) {
  TempDir dir;
  RandomModelOptions options;
  options.output_dir = dir.path();
  options.preset = "qwen2.5-0.5b";
  options.vocab_size = 300;
  options.layers = 2;
  options.dtype = "bfloat16";
  options.seed = 9;
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  auto weights = OpenOrFail(dir.path());
  ASSERT_NE(weights, nullptr);
  const std::vector<Site> sites = EverySite(2);
  const PackedBatch batch = MakeBatch({70, 9, 33}, 300, 3);
  auto run = [&](int threads) {
    auto shard = DecoderShard::Create(weights, *PlanShard(weights->config(), 0, 1), sites, threads);
    EXPECT_TRUE(shard.has_value()) << shard.error();
    std::vector<SiteActivations> captures;
    SoloCollective solo;
    if (shard) {
      EXPECT_TRUE((*shard)->Forward(batch, solo, &captures).has_value());
    }
    return captures;
  };
  const auto reference = run(1);
  ASSERT_EQ(reference.size(), sites.size());
  for (int threads : {2, 3}) {
    const auto first = run(threads), second = run(threads);
    ASSERT_EQ(first.size(), sites.size());
    ASSERT_EQ(second.size(), sites.size());
    for (size_t i = 0; i < sites.size(); ++i) {
      const auto& expected = reference[i].values;
      EXPECT_LE(MaxAbsDifference(first[i].values, expected), 1e-5f * MaxAbs(expected))
          << threads << " threads, " << sites[i].HookName();
      EXPECT_EQ(first[i].values, second[i].values)
          << threads << " threads, " << sites[i].HookName();
    }
  }
}

// An F16 model runs as the F32 model holding its exactly widened weights.
TEST(DecoderShard, Float16WeightsGiveTheForwardOfTheirWidenedValues) {
  TempDir half_dir, wide_dir;
  RandomModelOptions options;
  options.output_dir = half_dir.path();
  options.dtype = "float16";
  options.vocab_size = 256;
  options.seed = 3;
  ASSERT_TRUE(MakeRandomModel(options).has_value());
  auto half_file = SafetensorsFile::Open(half_dir.File("model.safetensors"));
  ASSERT_TRUE(half_file.has_value()) << half_file.error();
  std::vector<TensorToWrite> widened;
  for (const auto& [name, tensor] : (*half_file)->tensors()) {
    ASSERT_EQ(tensor.dtype, "F16");
    const SafetensorsTensor* source = &tensor;
    widened.push_back({name, "F32", tensor.shape, [source](std::span<uint8_t> out) {
                         WidenToFloat(source->bytes.data(), WeightDtype::kF16,
                                      static_cast<int64_t>(source->bytes.size() / 2),
                                      reinterpret_cast<float*>(out.data()));
                       }});
  }
  ASSERT_TRUE(WriteSafetensors(wide_dir.File("model.safetensors"), widened, {}).has_value());
  std::filesystem::copy_file(half_dir.File("config.json"), wide_dir.File("config.json"));

  auto half = OpenOrFail(half_dir.path());
  auto wide = OpenOrFail(wide_dir.path());
  ASSERT_NE(half, nullptr);
  ASSERT_NE(wide, nullptr);
  ASSERT_EQ(wide->Get("model.norm.weight").dtype, WeightDtype::kF32);
  const std::vector<Site> sites = EverySite(2);
  const PackedBatch batch = MakeBatch({20, 9}, 256, 10);
  const auto expected = test_support::RunShards(wide, 2, sites, batch);
  const auto actual = test_support::RunShards(half, 2, sites, batch);
  ASSERT_EQ(expected.size(), 2u);
  ASSERT_EQ(actual.size(), 2u);
  for (size_t i = 0; i < sites.size(); ++i) {
    EXPECT_LE(MaxAbsDifference(actual[0][i].values, expected[0][i].values),
              1e-6f * MaxAbs(expected[0][i].values))
        << sites[i].HookName();
  }
}

TEST(DecoderShard, ResidualSitesAddUpExactly) {
  auto weights = OpenOrFail(kTinyModelDir);
  ASSERT_NE(weights, nullptr);
  const std::vector<Site> sites = EverySite(2);
  const auto captures = test_support::RunShards(weights, 2, sites, MakeBatch({9, 4}, 512, 3));
  ASSERT_EQ(captures.size(), 2u);
  auto get = [&](SiteKind kind, int layer) -> const std::vector<float>& {
    for (const SiteActivations& capture : captures[0]) {
      if (capture.site == Site{kind, layer}) return capture.values;
    }
    ADD_FAILURE() << "missing site";
    return captures[0][0].values;
  };
  EXPECT_EQ(get(SiteKind::kResidPre, 0), get(SiteKind::kEmbed, -1));
  for (int layer = 0; layer < 2; ++layer) {
    const auto& pre = get(SiteKind::kResidPre, layer);
    const auto& attn = get(SiteKind::kAttnOut, layer);
    const auto& mid = get(SiteKind::kResidMid, layer);
    const auto& mlp = get(SiteKind::kMlpOut, layer);
    const auto& post = get(SiteKind::kResidPost, layer);
    for (size_t i = 0; i < pre.size(); ++i) {
      ASSERT_EQ(mid[i], pre[i] + attn[i]) << layer << " " << i;
      ASSERT_EQ(post[i], mid[i] + mlp[i]) << layer << " " << i;
    }
  }
  EXPECT_EQ(get(SiteKind::kResidPre, 1), get(SiteKind::kResidPost, 0));
}

// silu(gate(n)) * up(n) with n = post_attention_layernorm(resid_mid), and
// down_proj of that, evaluated in double from the F32 weights.
TEST(DecoderShard, MlpSitesMatchADirectEvaluation) {
  auto weights = OpenOrFail(kTinyModelDir);
  ASSERT_NE(weights, nullptr);
  const int layer = 1;
  const std::vector<Site> sites = {
      {SiteKind::kResidMid, layer}, {SiteKind::kMlpPost, layer}, {SiteKind::kMlpOut, layer}};
  const auto captures = test_support::RunShards(weights, 3, sites, MakeBatch({6, 3}, 512, 4));
  ASSERT_EQ(captures.size(), 3u);
  const auto& mid = captures[0][0].values;
  const auto& post = captures[0][1].values;
  const auto& out = captures[0][2].values;
  const std::string prefix = "model.layers." + std::to_string(layer) + ".";
  auto weight = [&](const std::string& name) {
    return static_cast<const float*>(weights->Get(prefix + name).data);
  };
  const float* norm = weight("post_attention_layernorm.weight");
  const float* gate = weight("mlp.gate_proj.weight");
  const float* up = weight("mlp.up_proj.weight");
  const float* down = weight("mlp.down_proj.weight");
  const int hidden = 64, inter = 176, tokens = 9;
  ASSERT_EQ(post.size(), static_cast<size_t>(tokens * inter));
  double worst_post = 0, worst_out = 0;
  for (int t = 0; t < tokens; ++t) {
    double squares = 0;
    for (int i = 0; i < hidden; ++i) squares += double{mid[t * hidden + i]} * mid[t * hidden + i];
    const double inverse_rms = 1.0 / std::sqrt(squares / hidden + 1e-6);
    std::vector<double> n(hidden);
    for (int i = 0; i < hidden; ++i) n[i] = norm[i] * (mid[t * hidden + i] * inverse_rms);
    std::vector<double> activation(inter);
    for (int c = 0; c < inter; ++c) {
      double g = 0, u = 0;
      for (int i = 0; i < hidden; ++i) {
        g += n[i] * gate[c * hidden + i];
        u += n[i] * up[c * hidden + i];
      }
      activation[c] = g / (1.0 + std::exp(-g)) * u;
      worst_post = std::max(worst_post, std::fabs(activation[c] - post[t * inter + c]));
    }
    for (int o = 0; o < hidden; ++o) {
      double sum = 0;
      for (int c = 0; c < inter; ++c) sum += activation[c] * down[o * inter + c];
      worst_out = std::max(worst_out, std::fabs(sum - out[t * hidden + o]));
    }
  }
  std::printf("mlp_post vs double: %.3g, mlp_out vs double: %.3g\n", worst_post, worst_out);
  EXPECT_LT(worst_post, 2e-5 * MaxAbs(post));
  EXPECT_LT(worst_out, 2e-5 * MaxAbs(out));
}

}  // namespace
}  // namespace actex
