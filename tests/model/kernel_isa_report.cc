// Every model test binary links this: it says at the start which kernels run, since
// ctest runs these binaries once as the CPU allows and once with ACTEX_ISA=avx2, and a
// result means little without knowing which path produced it.
#include <gtest/gtest.h>

#include <cstdio>

#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"

namespace actex {
namespace {

class KernelIsaReport : public ::testing::Environment {
 public:
  void SetUp() override {
    std::printf("kernels under test: %s (this CPU's widest: %s; %s), products by %s\n",
                IsaName(ActiveIsa()), IsaName(DetectedIsa()), CpuModelName().c_str(),
                GemmBackendName(PreferredGemmBackend(ActiveIsa())));
  }
};

[[maybe_unused]] ::testing::Environment* const kReport =
    ::testing::AddGlobalTestEnvironment(new KernelIsaReport);

}  // namespace
}  // namespace actex
