#ifndef ACTEX_TESTS_GPU_GPU_AVAILABLE_H_
#define ACTEX_TESTS_GPU_GPU_AVAILABLE_H_

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "gpu/cuda_shard_device.h"

namespace actex {

// Why a GPU case cannot run here (it then skips), or nothing. The emulator always offers
// its GPU: a case that skipped there would prove nothing, so there it fails instead.
inline std::optional<std::string> WhyNoGpu() {
  auto gpus = UsableGpuCount();
  if (gpus) return std::nullopt;
#ifdef ACTEX_GPU_EMULATED
  ADD_FAILURE() << "the CUDA emulator offers no GPU: " << gpus.error();
#endif
  return gpus.error();
}

}  // namespace actex

#endif  // ACTEX_TESTS_GPU_GPU_AVAILABLE_H_
