// A shard's forward on the CPU's cores (model/cpu_shard_device.h): the kernels of
// model/kernels on the shard's thread team (the class: cpu_shard_device_internal.h; its
// norms: cpu_shard_device_norms.cc).

#include "model/cpu_shard_device.h"

#include <algorithm>
#include <cmath>
#include <system_error>

#include "base/bfloat16.h"
#include "model/cpu_shard_device_internal.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gelu.h"
#include "model/kernels/half_float.h"
#include "model/kernels/swiglu.h"

namespace actex {

void CpuShardDevice::Embed(float* resid_stream, float* scratch) {
  ForgetRounding();
  const int64_t hidden = config_.hidden;
  const auto* embed = static_cast<const uint8_t*>(weights_.embed.data);
  const auto* position_embed = static_cast<const uint8_t*>(weights_.position_embed.data);
  const int64_t embed_row_bytes = hidden * WeightDtypeBytes(weights_.embed.dtype);
  team_.ForRanges(tokens_, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      float* row = resid_stream + t * hidden;  // [hidden]
      WidenToFloat(embed + batch_->token_ids[t] * embed_row_bytes, weights_.embed.dtype, hidden,
                   row);
      if (config_.embed_scale > 0.0f) {
        for (int64_t i = 0; i < hidden; ++i) row[i] *= config_.embed_scale;
      }
      if (position_embed != nullptr) {
        float* position_row = scratch + t * hidden;  // [hidden]
        WidenToFloat(position_embed + batch_->positions[t] * embed_row_bytes,
                     weights_.position_embed.dtype, hidden, position_row);
        AddInPlace(row, position_row, hidden);
      }
    }
  });
}

void CpuShardDevice::Rotate(int layer, float* queries, float* keys) {
  ForgetRounding();
  const int64_t dim = config_.head_dim;
  const int64_t q_width = heads_.heads * dim;
  const int64_t kv_width = heads_.kv_heads * dim;
  // Gemma 3's sliding layers have their own table.
  const RotaryTable& table = config_.local_rope && config_.Slides(layer) ? rotary_[1] : rotary_[0];
  const int32_t* positions = batch_->positions.data();
  team_.ForRanges(tokens_, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    ApplyRotary(queries + first * q_width, end - first, q_width, heads_.heads,
                static_cast<int>(dim), positions + first, table);
    ApplyRotary(keys + first * kv_width, end - first, kv_width, heads_.kv_heads,
                static_cast<int>(dim), positions + first, table);
  });
}

void CpuShardDevice::Attend(int layer, const float* queries, const float* keys, const float* values,
                            float* context) {
  ForgetRounding();
  const int64_t dim = config_.head_dim;
  const int64_t q_width = heads_.heads * dim;
  const int64_t kv_width = heads_.kv_heads * dim;
  // One task per (sequence, head): attention never crosses sequences. Mistral and
  // Gemma's sliding layers see only the last sliding_window keys.
  const int heads = heads_.heads;
  AttentionHeads layer_heads = heads_;
  layer_heads.window = config_.Slides(layer) ? config_.sliding_window : 0;
  const int64_t tasks = static_cast<int64_t>(batch_->sequence_lengths.size()) * heads;
  team_.Run(tasks, [&](int64_t task, int member) {
    const int64_t sequence = task / heads;
    const int local = static_cast<int>(task % heads);
    const int64_t first = sequence_starts_[sequence];
    AttentionHeads one_head = layer_heads;
    one_head.first_head = layer_heads.first_head + local;
    one_head.heads = 1;
    CausalAttention(queries + first * q_width + local * dim, keys + first * kv_width,
                    values + first * kv_width, q_width, kv_width,
                    batch_->sequence_lengths[sequence], one_head,
                    context + first * q_width + local * dim,
                    &attention_scratch_[member]);  // [length, dim] of head `local`
  });
}

void CpuShardDevice::Activate(float* x, const float* up, int64_t count, bool tapped) {
  // In bf16 the down product's X is rounded here, each block while it is still in the
  // cache, rather than by a pass of the product's own over [tokens, columns]; untapped,
  // the float32 block goes only to the member's L1-sized scratch, so x is not written
  // (nor written back to memory) at all.
  uint16_t* rounded = products_.RoundedInput(count);  // [tokens, columns]; null in fp32
  constexpr int64_t kBlock = 4096;                    // 16 KiB of float32: L1-sized
  const bool float32_kept = rounded == nullptr || tapped;
  if (!float32_kept) {
    for (std::vector<float>& scratch : activation_blocks_) scratch.resize(kBlock);
  }
  team_.ForRanges(count, kTeamElementGrain, [&](int64_t first, int64_t end, int member) {
    for (int64_t block = first; block < end; block += kBlock) {
      const int64_t length = std::min(kBlock, end - block);
      float* out = float32_kept ? x + block : activation_blocks_[member].data();  // [length]
      switch (config_.mlp) {
        case MlpKind::kGeluTanh:
          GeluTanh(x + block, length, out);
          break;
        case MlpKind::kGatedSilu:
          SwiGlu(x + block, up + block, length, out);
          break;
        case MlpKind::kGatedGeluTanh:
          GeGlu(x + block, up + block, length, out);
          break;
      }
      if (rounded != nullptr)
        ConvertToBfloat16({out, static_cast<size_t>(length)}, rounded + block);
    }
  });
  rounded_input_ = rounded != nullptr ? x : nullptr;
}

void CpuShardDevice::GatedLinear(const float* x, const Product& gate, const Product& up,
                                 int64_t /*count*/, bool tapped) {
  // In bf16 the products of a tile of features and their activation run together in
  // cache, and the activation is rounded for the down product as it is written.
  const bool rounded = products_.GatedLinear(
      x, gate.weight.in_features(), tokens_, Target(gate), Target(up),
      config_.mlp == MlpKind::kGatedSilu ? SwiGlu : GeGlu, tapped, &team_, x == rounded_input_);
  rounded_input_ = rounded ? gate.y : nullptr;
}

void CpuShardDevice::AddBias(float* rows, const std::vector<float>& bias) {
  if (bias.empty()) return;
  ForgetRounding();
  const int64_t hidden = config_.hidden;
  team_.ForRanges(tokens_, kTeamRowGrain, [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) AddInPlace(rows + t * hidden, bias.data(), hidden);
  });
}

ShardDeviceMaker CpuShardDevices(int threads, Precision precision) {
  return [threads, precision](
             const ShardSetup& setup) -> std::expected<std::unique_ptr<ShardDevice>, std::string> {
    if (threads < 1) {
      return std::unexpected("a shard needs at least one thread, not " + std::to_string(threads));
    }
    if (auto isa = CheckIsaOverride(); !isa) return std::unexpected(isa.error());
    if (precision == Precision::kBf16) {
      if (auto bf16 = Bf16ProductsSupported(); !bf16) {
        return std::unexpected("--precision bf16 on the CPU: " + bf16.error());
      }
    }
    try {
      return std::make_unique<CpuShardDevice>(setup, threads, precision);
    } catch (const std::system_error& e) {  // the team's threads (ThreadTeam)
      return std::unexpected("a device shard of " + std::to_string(threads) +
                             " threads (--blas-threads): " + e.what());
    }
  };
}

}  // namespace actex
