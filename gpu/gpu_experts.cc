#include "gpu/gpu_experts.h"

#include <algorithm>

#include "gpu/cuda_status.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/experts.h"

namespace actex::gpu {

GpuExperts::GpuExperts(const ModelConfig& config, const ShardSlice& slice)
    : hidden_(config.hidden),
      experts_(config.moe.experts),
      widest_columns_(std::max<int64_t>(slice.end_expert_column - slice.first_expert_column,
                                        slice.end_shared_column - slice.first_shared_column)),
      routing_(config, slice),
      caller_(1) {}

std::expected<RoutingOutputs, std::string> GpuExperts::Forward(
    const LayerShardWeights& w, const float* normed, int64_t tokens, float* shard_sum,
    ShardStreams& streams, const DeviceWeights& weights, Precision precision) {
  const int top_k = routing_.top_k();
  const int64_t assignments = tokens * top_k;
  for (auto [memory, values] : {std::pair{&logits_on_gpu_, tokens * experts_},
                                {&token_of_row_on_gpu_, assignments},
                                {&weight_of_row_on_gpu_, assignments},
                                {&gathered_, tokens * hidden_},
                                {&out_, tokens * hidden_},
                                {&gate_, tokens * widest_columns_},
                                {&up_, tokens * widest_columns_}}) {
    auto reserved = memory->Reserve(static_cast<size_t>(values) * 4);  // float or int32
    if (!reserved) return std::unexpected(reserved.error());
  }
  // The router, float32, and the routing on the host.
  auto routed = streams.Product(normed, tokens, weights.Matrix(w.router),
                                logits_on_gpu_.as<float>(), Precision::kFp32);
  if (!routed) return std::unexpected(routed.error());
  auto home = streams.ToHostNow(logits_on_gpu_.data(), routing_.LogitsFor(tokens),
                                static_cast<size_t>(tokens * experts_) * sizeof(float));
  if (!home) return std::unexpected(home.error());
  routing_.Route(tokens, caller_);
  token_of_row_.resize(static_cast<size_t>(assignments));
  weight_of_row_.resize(static_cast<size_t>(assignments));
  for (int64_t r = 0; r < assignments; ++r) {
    const int64_t assignment = routing_.assignments()[r];  // token · top_k + slot
    token_of_row_[r] = static_cast<int32_t>(assignment / top_k);
    weight_of_row_[r] = routing_.weight(assignment);
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
  auto cleared = CudaOk(cudaMemsetAsync(shard_sum, 0, tokens * hidden_ * sizeof(float), stream),
                        "clearing the experts' sum");
  if (!cleared) return std::unexpected(cleared.error());

  // HF's order: expert by expert, each adding into the tokens it serves (the other
  // shards' experts come in with the all-reduce).
  for (int e = routing_.first_expert(); e < routing_.end_expert(); ++e) {
    const int64_t first = routing_.first_assignment(e);
    const int64_t count = routing_.first_assignment(e + 1) - first;
    if (count == 0 || w.experts[e].gate.out_features() == 0) continue;
    const int32_t* rows = token_of_row_on_gpu_.as<int32_t>() + first;  // [count]
    auto gathered = CudaOk(GatherRows(normed, rows, count, hidden_, gathered_.as<float>(), stream),
                           "launching GatherRows");
    if (!gathered) return std::unexpected(gathered.error());
    auto ran = ExpertMlp(w.experts[e], gathered_.as<float>(), count, out_.as<float>(), streams,
                         weights, precision);
    if (!ran) return std::unexpected(ran.error());
    auto added =
        CudaOk(AddWeightedRows(out_.as<float>(), rows, weight_of_row_on_gpu_.as<float>() + first,
                               count, hidden_, shard_sum, stream),
               "launching AddWeightedRows");
    if (!added) return std::unexpected(added.error());
  }
  if (!w.shared_expert_gate.empty()) {  // qwen2_moe
    auto ran =
        ExpertMlp(w.shared_expert, normed, tokens, out_.as<float>(), streams, weights, precision);
    if (!ran) return std::unexpected(ran.error());
    auto added = CudaOk(AddGatedRows(out_.as<float>(), normed, weights.Vector(w.shared_expert_gate),
                                     tokens, hidden_, shard_sum, stream),
                        "launching AddGatedRows");
    if (!added) return std::unexpected(added.error());
  }
  return routing_.outputs();
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
  auto activated = CudaOk(Activate(Activation::kSiluTimesUp, gate_.as<float>(), up_.as<float>(),
                                   rows * columns, streams.compute()),
                          "launching Activate");
  if (!activated) return activated;
  return streams.Product(gate_.as<float>(), rows, weights.Matrix(expert.down), out,
                         precision);  // [rows, hidden]
}

}  // namespace actex::gpu
