#include "actors/device_plan.h"

#include <algorithm>

#include "actors/extract_options.h"
#include "model/cpu_shard_device.h"
#include "model/kernels/cpu_isa.h"

namespace actex {

ShardDeviceMaker DevicePlan::MakerFor(int shard_on_host, int threads, const LargestBatch& batch,
                                      std::span<const int64_t> forward_bytes_per_token) const {
  if (!cuda) return CpuShardDevices(threads, precision);
  return CudaShardDevices(CudaOptionsFor(shard_on_host, threads, batch, forward_bytes_per_token));
}

CudaOptions DevicePlan::CudaOptionsFor(int shard_on_host, int threads, const LargestBatch& batch,
                                       std::span<const int64_t> forward_bytes_per_token) const {
  CudaOptions options{.gpu = gpus[static_cast<size_t>(shard_on_host) % gpus.size()],
                      .precision = precision,
                      .host_threads = threads,
                      .batch_tokens = batch.tokens,
                      .batch_flag = batch.flag};
  const int on_gpus = static_cast<int>(gpus.size());
  for (int earlier = shard_on_host - on_gpus; earlier >= 0; earlier -= on_gpus) {
    ++options.earlier_shards;
    options.earlier_bytes_per_token += forward_bytes_per_token[static_cast<size_t>(earlier)];
  }
  return options;
}

std::string DevicePlan::Describe() const {
  if (!cuda) {
    return precision == Precision::kBf16 ? "cpu, bf16 products by oneDNN on " + Bf16ProductUnits()
                                         : "cpu, fp32";
  }
  std::string list;
  for (int gpu : gpus) list += (list.empty() ? "" : ",") + std::to_string(gpu);
  return "cuda (GPU" + std::string(gpus.size() > 1 ? "s " : " ") + list + "), " +
         PrecisionName(precision);
}

std::optional<std::string> DevicePlan::Warning() const {
  if (cuda || precision != Precision::kBf16) return std::nullopt;
  return Bf16SpeedWarning(CpuVendor(), CpuModelName(), Bf16ProductUnits());
}

std::expected<DevicePlan, std::string> PlanDevices(const std::string& device,
                                                   const std::string& gpus,
                                                   const std::string& precision) {
  DevicePlan plan;
  auto parsed_precision = ParsePrecision(precision);
  if (!parsed_precision) return std::unexpected("--precision: " + parsed_precision.error());
  plan.precision = *parsed_precision;
  if (device == "cpu") {
    if (!gpus.empty()) return std::unexpected("--gpus " + gpus + ": only with --device cuda");
    if (plan.precision == Precision::kBf16) {
      if (auto bf16 = Bf16ProductsSupported(); !bf16) {
        return std::unexpected("--precision bf16 with --device cpu: " + bf16.error());
      }
    }
    return plan;
  }
  if (device != "cuda") return std::unexpected("--device " + device + ": use cpu or cuda");
  plan.cuda = true;
  auto count = UsableGpuCount();
  if (!count) return std::unexpected("--device cuda: " + count.error());
  if (gpus.empty()) {
    for (int gpu = 0; gpu < *count; ++gpu) plan.gpus.push_back(gpu);
    return plan;
  }
  auto listed = ParseIndexList(gpus);
  if (!listed) return std::unexpected("--gpus " + gpus + ": " + listed.error());
  for (int gpu : *listed) {
    if (gpu < 0 || gpu >= *count) {
      return std::unexpected("--gpus " + gpus + ": " + std::to_string(gpu) +
                             " is not a GPU CUDA sees (" + std::to_string(*count) + ": 0.." +
                             std::to_string(*count - 1) + ")");
    }
    if (std::find(plan.gpus.begin(), plan.gpus.end(), gpu) != plan.gpus.end()) {
      return std::unexpected("--gpus " + gpus + ": GPU " + std::to_string(gpu) + " is given twice");
    }
    plan.gpus.push_back(gpu);
  }
  return plan;
}

}  // namespace actex
