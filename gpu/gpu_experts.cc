#include "gpu/gpu_experts.h"

#include <algorithm>

#include "gpu/cuda_status.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/experts.h"
#include "model/kernels/routing.h"

namespace actex::gpu {

GpuExperts::GpuExperts(const ModelConfig& config, const ShardSlice& slice)
    : hidden_(config.hidden),
      experts_(config.moe.experts),
      top_k_(config.moe.top_k),
      first_expert_(slice.first_expert),
      end_expert_(slice.end_expert),
      renormalize_(config.moe.renormalize),
      widest_columns_(std::max<int64_t>(slice.end_expert_column - slice.first_expert_column,
                                        slice.end_shared_column - slice.first_shared_column)) {}

std::expected<RoutingOutputs, std::string> GpuExperts::Forward(
    const LayerShardWeights& w, const float* normed, int64_t tokens, float* shard_sum,
    ShardStreams& streams, const DeviceWeights& weights, Precision precision) {
  const int64_t assignments = tokens * top_k_;
  for (auto [memory, bytes] : {std::pair{&logits_on_gpu_, tokens * experts_ * 4},
                               {&token_of_row_on_gpu_, assignments * 4},
                               {&weight_of_row_on_gpu_, assignments * 4},
                               {&gathered_, tokens * hidden_ * 4},
                               {&out_, tokens * hidden_ * 4},
                               {&gate_, tokens * widest_columns_ * 4},
                               {&up_, tokens * widest_columns_ * 4}}) {
    auto reserved = memory->Reserve(static_cast<size_t>(bytes));
    if (!reserved) return std::unexpected(reserved.error());
  }
  // The router, float32, and the routing on the host.
  auto routed = streams.Product(normed, tokens, weights.Matrix(w.router),
                                logits_on_gpu_.as<float>(), Precision::kFp32);
  if (!routed) return std::unexpected(routed.error());
  logits_.resize(static_cast<size_t>(tokens * experts_));
  auto home = streams.ToHostNow(logits_on_gpu_.data(), logits_.data(), logits_.size() * 4);
  if (!home) return std::unexpected(home.error());
  probabilities_.resize(logits_.size());
  ids_.resize(static_cast<size_t>(assignments));
  weights_.resize(static_cast<size_t>(assignments));
  RouteTopK(logits_.data(), tokens, experts_, top_k_, renormalize_, probabilities_.data(),
            ids_.data(), weights_.data());
  GroupByExpert(ids_.data(), assignments, experts_, &first_row_, &rows_of_);
  token_of_row_.resize(static_cast<size_t>(assignments));
  weight_of_row_.resize(static_cast<size_t>(assignments));
  for (int64_t r = 0; r < assignments; ++r) {
    token_of_row_[r] = static_cast<int32_t>(rows_of_[r] / top_k_);
    weight_of_row_[r] = weights_[rows_of_[r]];
  }
  cudaStream_t stream = streams.compute();
  for (auto [memory, source] :
       {std::pair<DeviceMemory*, const void*>{&token_of_row_on_gpu_, token_of_row_.data()},
        {&weight_of_row_on_gpu_, weight_of_row_.data()}}) {
    auto copied = CudaOk(
        cudaMemcpyAsync(memory->data(), source, assignments * 4, cudaMemcpyHostToDevice, stream),
        "copying the routing to the GPU");
    if (!copied) return std::unexpected(copied.error());
  }
  auto cleared = CudaOk(cudaMemsetAsync(shard_sum, 0, tokens * hidden_ * 4, stream),
                        "clearing the experts' sum");
  if (!cleared) return std::unexpected(cleared.error());

  // HF's order: expert by expert, each adding into the tokens it serves (the other
  // shards' experts come in with the all-reduce).
  for (int e = first_expert_; e < end_expert_; ++e) {
    const int64_t first = first_row_[e], count = first_row_[e + 1] - first;
    if (count == 0 || w.experts[e].gate.out_features() == 0) continue;
    const int32_t* rows = token_of_row_on_gpu_.as<int32_t>() + first;  // [count]
    GatherRows(normed, rows, count, hidden_, gathered_.as<float>(), stream);
    auto ran = ExpertMlp(w.experts[e], gathered_.as<float>(), count, out_.as<float>(), streams,
                         weights, precision);
    if (!ran) return std::unexpected(ran.error());
    AddWeightedRows(out_.as<float>(), rows, weight_of_row_on_gpu_.as<float>() + first, count,
                    hidden_, shard_sum, stream);
  }
  if (!w.shared_expert_gate.empty()) {  // qwen2_moe
    auto ran =
        ExpertMlp(w.shared_expert, normed, tokens, out_.as<float>(), streams, weights, precision);
    if (!ran) return std::unexpected(ran.error());
    AddGatedRows(out_.as<float>(), normed, weights.Vector(w.shared_expert_gate), tokens, hidden_,
                 shard_sum, stream);
  }
  return RoutingOutputs{.router_logits = logits_.data(),
                        .expert_ids = ids_.data(),
                        .expert_weights = weights_.data()};
}

std::expected<void, std::string> GpuExperts::ExpertMlp(const ExpertShardWeights& expert,
                                                       const float* x, int64_t rows, float* out,
                                                       ShardStreams& streams,
                                                       const DeviceWeights& weights,
                                                       Precision precision) {
  const int64_t columns = expert.gate.out_features();
  for (auto [matrix, y] :
       {std::pair{&expert.gate, gate_.as<float>()}, {&expert.up, up_.as<float>()}}) {
    auto done = streams.Product(x, rows, weights.Matrix(*matrix), y, precision);  // [rows, columns]
    if (!done) return done;
  }
  Activate(Activation::kSiluTimesUp, gate_.as<float>(), up_.as<float>(), rows * columns,
           streams.compute());
  return streams.Product(gate_.as<float>(), rows, weights.Matrix(expert.down), out,
                         precision);  // [rows, hidden]
}

}  // namespace actex::gpu
