// The CUDA device of a build that found no CUDA toolkit: it refuses, saying so.

#include "gpu/cuda_shard_device.h"

namespace actex {
namespace {

constexpr char kNoCuda[] =
    "this actex was built without CUDA (CMake found no CUDA toolkit): rebuild it where "
    "nvcc and cuBLAS are installed, or use --device cpu";

}  // namespace

ShardDeviceMaker CudaShardDevices(const CudaOptions&) {
  return [](const ShardSetup&) -> std::expected<std::unique_ptr<ShardDevice>, std::string> {
    return std::unexpected(kNoCuda);
  };
}

bool CudaBuilt() { return false; }

std::expected<int, std::string> UsableGpuCount() { return std::unexpected(kNoCuda); }

}  // namespace actex
